package haproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Proxy is a running HAProxy.
type Proxy struct {
	cfg    Config
	cmd    *exec.Cmd
	exited chan struct{}
}

// Bin is where Debian's haproxy package installs the program, which is not
// on an unprivileged user's PATH.
const Bin = "/usr/sbin/haproxy"

// Start writes c's configuration into dir, checks it (haproxy -c), runs
// HAProxy in the foreground of a process of its own, killed with this one,
// logging to dir/haproxy.log, and returns once it accepts connections.
func Start(ctx context.Context, c Config, dir string) (*Proxy, error) {
	bin := Bin
	if p, err := exec.LookPath("haproxy"); err == nil {
		bin = p
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(Render(c)), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, bin, "-c", "-q", "-f", path).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy refused %s: %w: %s", path, err, out)
	}
	log, err := os.OpenFile(filepath.Join(dir, "haproxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// -db: stay in the foreground, so that this process owns it.
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start haproxy: %w", err)
	}
	p := &Proxy{cfg: c, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait() //nolint:errcheck // Stop is the usual end
		close(p.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.Listen, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, errors.New("haproxy exited at start; see haproxy.log")
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("haproxy not accepting on %s after 10 s", c.Listen)
		}
	}
}

// Addr is the front door's address.
func (p *Proxy) Addr() string { return p.cfg.Listen }

// Stop ends HAProxy (SIGUSR1 is its graceful stop; SIGKILL after a second)
// and waits until it has gone.
func (p *Proxy) Stop() {
	p.cmd.Process.Signal(syscall.SIGUSR1) // gone already is fine
	select {
	case <-p.exited:
	case <-time.After(time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}
