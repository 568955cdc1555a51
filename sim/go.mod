module github.com/seedfall/seedfall/sim

go 1.21
