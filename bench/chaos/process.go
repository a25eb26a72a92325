package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is one run of the web binary that can be killed, paused and
// started again on the same address, so clients find it where it was.
type process struct {
	name    string
	addr    string // 127.0.0.1:port
	args    []string
	env     []string
	logPath string
	// ready is the path polled for a 200 once it has started; with
	// anyAnswer, any answer below 500 will do.
	ready     string
	anyAnswer bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	// deaf are the spans during which the process could hear no request
	// (paused, or killed and not yet serving again), and deafSince the
	// start of one still open: what the clients' asks are judged by
	// (heard).
	deaf      []window
	deafSince time.Time
}

// goDeaf opens a span during which the process hears nothing; hearing
// closes it.
func (p *process) goDeaf() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deafSince.IsZero() {
		p.deafSince = time.Now()
	}
}

func (p *process) hearing() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.deafSince.IsZero() {
		p.deaf = append(p.deaf, window{kind: p.name, from: p.deafSince, to: time.Now()})
		p.deafSince = time.Time{}
	}
}

// heardFrom returns when the process could first hear a request sent at
// sent: then, or, when it was paused or down at that moment, the end of
// that span (the zero time while it lasts). A paused shop's kernel accepts
// the connection and the shop reads the request once it runs again: an
// answer shows that the shop heard it, but not that it heard it when it
// was sent.
func (p *process) heardFrom(sent time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.deaf {
		if !w.from.After(sent) && w.to.After(sent) {
			return w.to
		}
	}
	if !p.deafSince.IsZero() && !p.deafSince.After(sent) {
		return time.Time{}
	}
	return sent
}

// heard reports whether the process could hear, and keep, a request sent
// at from and given up on at to: it was neither paused nor down at any
// moment between the two.
func (p *process) heard(from, to time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.deafSince.IsZero() && p.deafSince.Before(to) {
		return false
	}
	for _, w := range p.deaf {
		if w.from.Before(to) && w.to.After(from) {
			return false
		}
	}
	return true
}

// freeAddr returns a loopback address nobody listens on now. Another
// program could take it before the process does; on a test machine's
// loopback that is rare enough, and start fails loudly if it happens.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs the process and waits until it answers.
func (p *process) start(ctx context.Context) error {
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = log, log
	// Killed with the harness, however the harness ends; and a group of
	// its own, so a Ctrl-C at the terminal reaches the harness only.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // killing it is the point
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	if err := p.waitReady(ctx, exited); err != nil {
		return err
	}
	p.hearing()
	return nil
}

func (p *process) waitReady(ctx context.Context, exited chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+p.ready, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || (p.anyAnswer && resp.StatusCode < 500) {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited while starting; see %s", p.name, p.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not become ready in 60 s; see %s", p.name, p.logPath)
		}
	}
}

// running reports whether the process is alive (paused counts as alive).
func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL, as a crash of the machine would end it, and waits.
func (p *process) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	p.goDeaf()
	cmd.Process.Kill() // it may have gone already
	<-exited
}

// pause stops the process (SIGSTOP) without telling it; resume lets it
// go on where it was.
func (p *process) pause() error {
	p.goDeaf()
	return p.signal(syscall.SIGSTOP)
}

func (p *process) resume() error {
	err := p.signal(syscall.SIGCONT)
	p.hearing()
	return err
}

func (p *process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return errors.New("not started")
	}
	return p.cmd.Process.Signal(sig)
}

// terminate asks the process to shut down gracefully, and kills it if it
// has not within grace.
func (p *process) terminate(grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		p.kill()
	}
}

// freeAddrOn is freeAddr on another address of this machine (the bridge
// of a run's network).
func freeAddrOn(ip string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
