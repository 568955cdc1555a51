module github.com/seedfall/seedfall/examples/inventory

go 1.26

require github.com/seedfall/seedfall/sim v0.0.0

replace github.com/seedfall/seedfall/sim => ../../sim
