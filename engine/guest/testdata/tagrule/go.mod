module example.com/tagrule

go 1.26

require (
	github.com/akrylysov/pogreb v0.10.2
	github.com/hashicorp/go-sockaddr v1.0.7
	github.com/syndtr/goleveldb v1.0.0
)

require github.com/golang/snappy v0.0.0-20180518054509-2e65f85255db // indirect
