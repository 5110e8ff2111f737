//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// serverCPU counts a server's own CPU time and its children's, running and
// reaped: here the test process stands in for the postmaster and a shell
// loop for a backend.
func TestServerCPU(t *testing.T) {
	dir := t.TempDir()
	if _, ok := serverCPU(dir); ok {
		t.Fatal("a directory without postmaster.pid was read")
	}
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, ok := serverCPU(dir)
	if !ok {
		t.Fatal("own process not read")
	}
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	after, _ := serverCPU(dir)
	if child < 50*time.Millisecond {
		t.Fatalf("the child used only %v: too little to check", child)
	}
	if got := after - before; got < child-20*time.Millisecond {
		t.Errorf("the server's CPU grew by %v while a reaped child alone used %v", got, child)
	}
}
