module github.com/seedfall/seedfall/examples

go 1.26
