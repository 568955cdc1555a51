// flood writes to stdout as fast as it can: -bytes in all (0: without
// end), in writes of -write bytes, with a newline ending every -line bytes
// (0: no newline at all). Then it prints "flooded N bytes" on a line of its
// own and exits 0.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	total := flag.Int64("bytes", 0, "bytes to write in all; 0 writes without end")
	write := flag.Int("write", 64<<10, "bytes per write call")
	line := flag.Int("line", 0, "bytes per line, newline included; 0: no newline")
	flag.Parse()
	if *write <= 0 || *line < 0 || (*line > 0 && *write%*line != 0) {
		fmt.Fprintln(os.Stderr, "flood: -write must be a positive multiple of -line")
		os.Exit(2)
	}
	// One period of the text, then doubled by copying: filling 64 MiB a
	// byte at a time would take the guest longer than a short watchdog.
	period := *line
	if period == 0 {
		period = 26
	}
	buf := make([]byte, max(*write, period))
	for i := 0; i < period; i++ {
		buf[i] = 'a' + byte(i%26)
	}
	if *line > 0 {
		buf[*line-1] = '\n'
	}
	for n := period; n < len(buf); n *= 2 {
		copy(buf[n:], buf[:n])
	}
	buf = buf[:*write]
	var n int64
	for *total == 0 || n < *total {
		b := buf
		if *total > 0 && int64(len(b)) > *total-n {
			b = b[:*total-n]
		}
		if _, err := os.Stdout.Write(b); err != nil {
			fmt.Fprintln(os.Stderr, "flood:", err)
			os.Exit(1)
		}
		n += int64(len(b))
	}
	fmt.Printf("\nflooded %d bytes\n", n)
}
