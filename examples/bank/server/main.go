// Command server keeps account balances in memory and moves money between them over
// TCP, one line each way:
//
//	TRANSFER <from> <to> <amount>  ->  OK <receipt> | REFUSED insufficient funds
//	BALANCE <account>              ->  BALANCE <n>
//	anything else                  ->  ERR <message>
//
// Accounts are numbered from 0 to -accounts - 1 and each opens with -initial. Every
// transfer answers with a receipt that signs the transfer and both new balances with
// the bank's key.
//
// Each connection is served by its own goroutine. A transfer reads the two balances,
// computes the new ones and signs them, then writes them back. Without -lock nothing
// keeps another connection's transfer from doing the same in between, and the one
// that writes last overwrites the other's update: money is created or destroyed. That
// is the bug this example exists to show. -lock holds the bank's mutex for the whole
// transfer. -log makes the transfer quick: it logs a line between its read and its
// write instead of signing, and answers OK logged.
package main

import (
	"bufio"
	"crypto/ed25519"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	accounts := flag.Int("accounts", 4, "number of accounts")
	initial := flag.Int64("initial", 1000, "opening balance of each account")
	lock := flag.Bool("lock", false, "hold the bank's mutex for the whole transfer (the fix)")
	logOnly := flag.Bool("log", false, "log each transfer between its read and its write instead of signing a receipt: a quick handler")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")

	b := newBank(*accounts, *initial, *lock)
	if *logOnly {
		b.sign = func(msg string) string {
			log.Print(msg)
			return "logged"
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, lock %v", ln.Addr(), *lock)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(b, c)
	}
}

func serve(b *bank, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if _, err := io.WriteString(c, handle(b, sc.Text())+"\n"); err != nil {
			return
		}
	}
}

func handle(b *bank, line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 4 && f[0] == "TRANSFER":
		from, err1 := b.account(f[1])
		to, err2 := b.account(f[2])
		amount, err3 := strconv.ParseInt(f[3], 10, 64)
		switch {
		case err1 != nil:
			return "ERR " + err1.Error()
		case err2 != nil:
			return "ERR " + err2.Error()
		case err3 != nil || amount <= 0:
			return "ERR the amount must be a whole number above 0"
		case from == to:
			return "ERR the two accounts are the same"
		}
		return b.transfer(from, to, amount)
	case len(f) == 2 && f[0] == "BALANCE":
		a, err := b.account(f[1])
		if err != nil {
			return "ERR " + err.Error()
		}
		return "BALANCE " + strconv.FormatInt(b.balance(a), 10)
	}
	return "ERR expected TRANSFER <from> <to> <amount> or BALANCE <account>"
}

// bank is the balances, in memory.
type bank struct {
	lock     bool
	mu       sync.Mutex
	balances []int64
	key      ed25519.PrivateKey

	// sign returns the receipt of a transfer: b.receipt, replaced by tests.
	sign func(msg string) string
}

func newBank(accounts int, initial int64, lock bool) *bank {
	// A fixed key, so that receipts are the same in every run.
	b := &bank{lock: lock, balances: make([]int64, accounts), key: ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))}
	b.sign = b.receipt
	for i := range b.balances {
		b.balances[i] = initial
	}
	return b
}

func (b *bank) account(s string) (int, error) {
	a, err := strconv.Atoi(s)
	if err != nil || a < 0 || a >= len(b.balances) {
		return 0, fmt.Errorf("no account %q: accounts are 0 to %d", s, len(b.balances)-1)
	}
	return a, nil
}

// transfer moves amount from one account to another. Without -lock it reads both
// balances, computes and signs the new ones, and writes them back, with nothing to
// stop another transfer in between: the lost update.
func (b *bank) transfer(from, to int, amount int64) string {
	if b.lock {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	src, dst := b.balances[from], b.balances[to]
	if src < amount {
		return "REFUSED insufficient funds"
	}
	src, dst = src-amount, dst+amount
	receipt := b.sign(fmt.Sprintf("transfer %d from %d (now %d) to %d (now %d)", amount, from, src, to, dst))
	b.balances[from], b.balances[to] = src, dst
	return "OK " + receipt
}

func (b *bank) balance(a int) int64 {
	if b.lock {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	return b.balances[a]
}

// receipt signs msg with the bank's Ed25519 key, so that a customer can show it to
// anyone: tens of microseconds of work, most of a transfer's.
func (b *bank) receipt(msg string) string {
	return hex.EncodeToString(ed25519.Sign(b.key, []byte(msg)))
}
