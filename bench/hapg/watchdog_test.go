package hapg

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestThrowawayFormationDiesWithProcess starts a throwaway formation in a
// child process that then kills itself, and checks that the watchdog stops
// every keeper and server and deletes the folder.
func TestThrowawayFormationDiesWithProcess(t *testing.T) {
	if dir := os.Getenv("HAPG_TEST_CHILD"); dir != "" {
		f, err := Start(t.Context(), Options{Dir: dir, Throwaway: true, Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		var pids []string
		for _, n := range append(f.Nodes(), f.Monitor()) {
			keeper, _ := n.keeperPID()
			postmaster, _ := n.postmasterPID()
			pids = append(pids, strconv.Itoa(keeper), strconv.Itoa(postmaster))
		}
		fmt.Println(strings.Join(pids, " "))
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	dir, err := os.MkdirTemp("/tmp", "hapg-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThrowawayFormationDiesWithProcess$")
	cmd.Env = append(os.Environ(), "HAPG_TEST_CHILD="+dir)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: got %v, want killed; output:\n%s", err, out)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			t.Fatalf("child printed %q, want the keepers' and servers' pids", out)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 6 {
		t.Fatalf("child printed %q, want 6 pids", out)
	}

	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there a minute after its process died", dir)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d: got %v, want it gone (ESRCH)", pid, err)
		}
	}
}
