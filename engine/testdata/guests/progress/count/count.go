// Package count is the counting loop that progress and progressv2 share.
package count

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Run resumes the count kept in the file "count" and steps it to n,
// calling each, if set, after every step.
func Run(version string, n int, every time.Duration, each func(k int)) {
	k := 0
	if b, err := os.ReadFile("count"); err == nil {
		k, _ = strconv.Atoi(string(b))
	}
	fmt.Printf("%s resumes at %d\n", version, k)
	for k < n {
		time.Sleep(every)
		k++
		f, err := os.Create("count")
		if err != nil {
			fmt.Println("create:", err)
			os.Exit(1)
		}
		fmt.Fprint(f, k)
		if err := f.Sync(); err != nil {
			fmt.Println("sync:", err)
			os.Exit(1)
		}
		f.Close()
		fmt.Printf("%s step %d\n", version, k)
		if each != nil {
			each(k)
		}
	}
	fmt.Printf("%s done at %d\n", version, k)
}
