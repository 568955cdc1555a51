// grpcdns checks that a gRPC client using the default dns:/// resolver
// connects at once: the resolver's LookupTXT for _grpc_config.<host> gets
// NXDOMAIN instead of waiting for DNS timeouts (20 virtual seconds before
// the net overlay answered DNS). With -role server it serves the standard
// health service on :7000; the client calls it once and prints how long the
// call took in virtual time.
//
// It is its own module so that gRPC stays out of seedfall's and the other
// guests' dependencies; engine/dnsif_test.go skips it when the module
// cannot be downloaded.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	role := flag.String("role", "client", "server or client")
	flag.Parse()
	if *role == "server" {
		l, err := net.Listen("tcp", ":7000")
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		s := grpc.NewServer()
		healthpb.RegisterHealthServer(s, health.NewServer())
		fmt.Println("serve:", s.Serve(l))
		os.Exit(1)
	}
	// The nodes start together: wait until the server listens, so that
	// gRPC's reconnect backoff plays no part in the time measured.
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", "server:7000")
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			fmt.Println("the server never listened:", err)
			os.Exit(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	conn, err := grpc.NewClient("dns:///server:7000", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println("NewClient:", err)
		os.Exit(1)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil {
		fmt.Printf("health check: %v after %v\n", err, time.Since(start))
		os.Exit(1)
	}
	fmt.Printf("health %v after %v\n", resp.GetStatus(), time.Since(start))
}
