// Command server runs a NATS server with JetStream, embedded as a library
// the way the nats-server documentation shows (server.NewServer, Start,
// ReadyForConnections), from a configuration file such as the ones next to
// this directory. JetStream keeps its streams in file storage under the
// store_dir of the configuration, on the node's disk.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/logger"
	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	conf := flag.String("c", "nats.conf", "NATS configuration file")
	flag.Parse()

	opts, err := server.ProcessConfigFile(*conf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
	// The server's own logger, without colors: ConfigureLogger would add
	// ANSI colors whenever stderr looks like a terminal.
	ns.SetLogger(logger.NewStdLogger(opts.Logtime, opts.Debug, opts.Trace, false, false), opts.Debug, opts.Trace)
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(os.Stderr, "server: not ready for connections after 30s")
		os.Exit(1)
	}
	ns.WaitForShutdown()
}
