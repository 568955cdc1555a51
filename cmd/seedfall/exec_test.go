package main

import "os/exec"

func execOutput(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).Output()
}
