package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin/runner"
	"golang.org/x/sys/unix"

	"github.com/scorekit/scorekit/host/internal/cgroup"
)

// procRunner starts and stops one plugin process for go-plugin (ClientConfig.RunnerFunc),
// instead of go-plugin's own runner, so that the host decides:
//   - the command line and the environment (go-plugin's runner appends os.Environ());
//   - that the process leads a process group of its own, killed as a group, and dies with
//     the host (Pdeathsig);
//   - that its stdout and stderr end when it does: go-plugin waits for EOF on both before
//     it considers a plugin gone, and a process the plugin started could hold them open
//     for ever.
type procRunner struct {
	cmd  *exec.Cmd
	name string
	log  *slog.Logger
	out  *outputCap

	stdout, stderr *os.File // the read ends

	// cg holds the process and everything it starts (nil without cgroups); confined:
	// it runs in bubblewrap, and makes its sockets inside the sandbox.
	cg       *cgroup.Proc
	confined bool

	pid    int
	mu     sync.Mutex
	reaped bool
	done   chan struct{} // closed when the process has exited and been reaped
	err    error
	state  *os.ProcessState
	// What the tree's cgroup counted when it ended: processes the kernel killed at the
	// memory limit, forks the pids limit refused, CPU time. Valid once done is closed.
	oomKills, pidsRefused int
	treeCPU               float64

	oom       atomic.Bool // its stderr said it ran out of memory
	noThread  atomic.Bool // its stderr said a thread could not be created
	crashLine atomic.Pointer[string]

	stderrDone chan struct{} // closed when go-plugin has read stderr to its end
	stderrOnce sync.Once
}

var _ runner.Runner = (*procRunner)(nil)

// pipeGrace is how long the host keeps reading a dead plugin's stdout and stderr before it
// closes them: what the plugin wrote is in the pipes already; only a process that escaped
// the plugin's group (possible when it is not confined) can keep them open longer.
const pipeGrace = time.Second

func newRunner(l launch, name string, log *slog.Logger, out *outputCap, cg *cgroup.Proc, confined bool) *procRunner {
	cmd := &exec.Cmd{Path: l.path, Args: append([]string{l.path}, l.args...), Env: l.env}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return &procRunner{cmd: cmd, name: name, log: log, out: out, cg: cg, confined: confined,
		done: make(chan struct{}), stderrDone: make(chan struct{})}
}

func (r *procRunner) Start(context.Context) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	r.cmd.Stdout, r.cmd.Stderr = outW, errW
	err = cgroup.Start(r.cmd, r.cg)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		r.cg.Remove()
		return err
	}
	r.stdout, r.stderr = outR, errR
	r.pid = r.cmd.Process.Pid
	go r.wait()
	return nil
}

// wait reaps the process. Before it does, it kills the process's group: the group's id
// stays reserved while its leader is an unreaped zombie, so the signal cannot reach a
// stranger that reused the id.
func (r *procRunner) wait() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, r.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	r.mu.Lock()
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	// Then the rest of the tree, what left the group included.
	r.cg.Kill()
	r.oomKills, r.pidsRefused, r.treeCPU = r.cg.OOMKills(), r.cg.PidsRefused(), r.cg.CPUSeconds()
	r.err = r.cmd.Wait()
	r.state = r.cmd.ProcessState
	r.reaped = true
	r.mu.Unlock()
	close(r.done)
	go r.cg.Remove()
	time.AfterFunc(pipeGrace, func() {
		// Reads then see EOF (closedFile); a no-op when they already did.
		r.stdout.Close()
		r.stderr.Close()
	})
}

// Wait returns when the process has exited.
func (r *procRunner) Wait(context.Context) error {
	<-r.done
	return r.err
}

// Kill kills the process's whole group at once. It does not wait.
func (r *procRunner) Kill(context.Context) error {
	r.killGroup()
	return nil
}

func (r *procRunner) killGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid > 0 && !r.reaped {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		r.cg.Kill()
	}
}

// exited reports whether the process is gone.
func (r *procRunner) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// stderrEnded waits until the process's stderr has been read to its end (its last words
// say why it died), or a bounded while after it exited.
func (r *procRunner) stderrEnded() {
	select {
	case <-r.stderrDone:
	case <-time.After(pipeGrace + time.Second):
	}
}

// sawOOM reports whether the process said it ran out of memory, once its stderr has ended.
func (r *procRunner) sawOOM() bool {
	r.stderrEnded()
	return r.oom.Load()
}

// diedOfOOM reports whether the process exited (within a second) at its memory limit: the
// kernel killed a process of its tree there, or it said it ran out of memory.
func (r *procRunner) diedOfOOM() bool {
	select {
	case <-r.done:
	case <-time.After(time.Second):
		return r.sawOOM()
	}
	return r.oomKills > 0 || r.sawOOM()
}

// crashed reports whether the process died of a crash (SIGSEGV, SIGBUS, SIGABRT), itself
// or, confined, the plugin inside the sandbox (bubblewrap exits with 128 + the signal).
func (r *procRunner) crashed() bool {
	select {
	case <-r.done:
	case <-time.After(time.Second):
		return false
	}
	if r.state == nil {
		return false
	}
	ws, ok := r.state.Sys().(syscall.WaitStatus)
	if !ok {
		return false
	}
	for _, sig := range []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT} {
		if (ws.Signaled() && ws.Signal() == sig) || (ws.Exited() && ws.ExitStatus() == 128+int(sig)) {
			return true
		}
	}
	return false
}

// cpuSeconds is the CPU time the process used, with the descendants it waited for, or its
// whole tree as its cgroup counted it (bubblewrap's init on a root host is never waited
// for, so its account does not reach the host); valid once it exited.
func (r *procRunner) cpuSeconds() float64 {
	if r.state == nil {
		return r.treeCPU
	}
	return max(r.treeCPU, (r.state.UserTime() + r.state.SystemTime()).Seconds())
}

func (r *procRunner) Diagnose(context.Context) string { return "" }
func (r *procRunner) Stdout() io.ReadCloser           { return closedFile{r.stdout} }
func (r *procRunner) Stderr() io.ReadCloser {
	return &stderrReader{f: r.stderr, r: r, out: r.out, end: func() { r.stderrOnce.Do(func() { close(r.stderrDone) }) }}
}
func (r *procRunner) Name() string { return r.name }
func (r *procRunner) ID() string   { return strconv.Itoa(r.pid) }

// PluginToHost translates the address a plugin listens on for the host: a confined plugin's
// sockets are in a tmpfs inside its sandbox, which the host reaches through the root of
// the sandbox's first process.
func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	if network != "unix" || !r.confined {
		return network, addr, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", r.pid, r.pid))
	if err != nil {
		return "", "", fmt.Errorf("find the sandbox of plugin process %d: %w", r.pid, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if first == "" {
		return "", "", fmt.Errorf("find the sandbox of plugin process %d: it has no process inside", r.pid)
	}
	return network, "/proc/" + first + "/root" + addr, nil
}

// HostToPlugin: the host's sockets are at the same path in the sandbox (bound read-only).
func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// closedFile reads f, and reads EOF once the host closed f (go-plugin logs any other error).
type closedFile struct{ f *os.File }

func (c closedFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

func (c closedFile) Close() error { return c.f.Close() }

// stderrReader is the plugin's raw stderr as go-plugin reads it (to forward it to the
// host's logger): it notes an out-of-memory message and drops what exceeds the output cap.
type stderrReader struct {
	f    *os.File
	r    *procRunner
	out  *outputCap
	end  func() // called once the stream has ended
	tail []byte // the end of the previous read, so a message split across reads is seen
	line []byte // the line being read, up to maxCrashLine bytes
}

// maxCrashLine bounds the crash message a caller is shown.
const maxCrashLine = 200

func (s *stderrReader) Read(p []byte) (int, error) {
	for {
		n, err := closedFile{s.f}.Read(p)
		if n > 0 {
			seen := append(s.tail, p[:n]...)
			if stderrSaysOOM(seen) {
				s.r.oom.Store(true)
			}
			if stderrSaysNoThread(seen) {
				s.r.noThread.Store(true)
			}
			s.tail = append(s.tail[:0], seen[max(0, len(seen)-32):]...)
			s.lines(p[:n])
			if !s.out.take(n) && err == nil {
				continue
			}
		}
		if err != nil {
			s.end()
		}
		return n, err
	}
}

func (s *stderrReader) Close() error { return s.f.Close() }

// lines notes the first line that says why the plugin crashed: Go's "panic: ..." or
// "fatal error: ...". The stack after it goes to the host's log only.
func (s *stderrReader) lines(p []byte) {
	for len(p) > 0 && s.r.crashLine.Load() == nil {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxCrashLine - len(s.line); room > 0 {
			s.line = append(s.line, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			return
		}
		for _, prefix := range []string{"panic: ", "fatal error: "} {
			if msg, ok := strings.CutPrefix(string(s.line), prefix); ok {
				msg = strings.TrimSpace(msg)
				s.r.crashLine.Store(&msg)
				break
			}
		}
		s.line, p = s.line[:0], p[i+1:]
	}
}

// outputCap bounds what one process may print (stdout and stderr, forwarded to the host's
// logger) per call: Limits.MaxOutputBytes. The rest is dropped, with one warning per call.
type outputCap struct {
	log   *slog.Logger
	limit int

	mu      sync.Mutex
	used    int
	dropped bool
}

// reset starts a call's budget.
func (c *outputCap) reset() {
	c.mu.Lock()
	c.used, c.dropped = 0, false
	c.mu.Unlock()
}

// take reports whether n more bytes may be forwarded.
func (c *outputCap) take(n int) bool {
	if c == nil || c.limit <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used+n <= c.limit {
		c.used += n
		return true
	}
	if !c.dropped {
		c.dropped = true
		c.log.Warn("plugin output over limits.max_output_bytes in this call; the rest is dropped", "max_output_bytes", c.limit)
	}
	return false
}
