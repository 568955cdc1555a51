module start

go 1.26
