module github.com/seedfall/seedfall

go 1.26.8

require github.com/seedfall/seedfall/sim v0.0.0

require (
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)

replace github.com/seedfall/seedfall/sim => ./sim
