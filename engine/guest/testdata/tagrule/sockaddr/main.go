// go-sockaddr v1.0.7 finds its routes in route_info_linux.go; its fallback
// for other systems is tagged nacl || plan9 || js, not wasip1:
// it builds for wasip1 by the tag rule.
package main

import (
	"fmt"

	sockaddr "github.com/hashicorp/go-sockaddr"
)

func main() {
	ri, err := sockaddr.NewRouteInfo()
	fmt.Println(ri, err)
}
