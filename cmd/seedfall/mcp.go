package main

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/cmd/seedfall/internal/mcpserver"
)

func init() {
	register(command{"mcp", "[-c seedfall.json]", mcpCmd})
}

// mcpCmd serves seedfall's commands as MCP tools over stdin and stdout
// until stdin closes; the calls still running then are cancelled
// (mcpserver).
func mcpCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	cfg := fs.String("c", "seedfall.json", "the world file a tool call uses when it names none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if stdout == io.Writer(os.Stdout) {
		// stdout carries the protocol alone: anything else that prints to
		// os.Stdout in this process would corrupt it.
		os.Stdout = os.Stderr
	}
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return err
	}
	return mcpserver.Serve(context.Background(), mcpserver.Options{Config: *cfg, Root: root, Log: stderr}, os.Stdin, stdout)
}
