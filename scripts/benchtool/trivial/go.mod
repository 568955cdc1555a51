module trivial

go 1.26
