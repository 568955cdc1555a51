package main

import (
	"bufio"
	"fmt"
	"log"
	"net"
	"strings"
	"time"
)

const proposalTimeout = 2 * time.Second

func (n *node) serveClients(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("client listener: %v", err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatalf("client listener: %v", err)
		}
		go n.serveClient(c)
	}
}

func (n *node) serveClient(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var reply string
		switch {
		case len(f) == 3 && f[0] == "PUT":
			r := n.propose("put", f[1], f[2], proposalTimeout)
			switch {
			case r.err != "":
				reply = "ERR " + r.err
			default:
				reply = "OK"
			}
		case len(f) == 2 && f[0] == "GET":
			r := n.propose("get", f[1], "", proposalTimeout)
			switch {
			case r.err != "":
				reply = "ERR " + r.err
			case r.ok:
				reply = "VALUE " + r.value
			default:
				reply = "NOTFOUND"
			}
		default:
			reply = "ERR want PUT <key> <value> or GET <key>"
		}
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}
