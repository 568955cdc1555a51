module github.com/seedfall/seedfall

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/anishathalye/porcupine v1.3.1
	github.com/google/jsonschema-go v0.4.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/peterh/liner v1.2.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/seedfall/seedfall/sim v0.0.0
	github.com/tetratelabs/wazero v1.12.0
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
	golang.org/x/sys v0.48.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.42.0 // indirect
)

replace github.com/seedfall/seedfall/sim => ./sim
