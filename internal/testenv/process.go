package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// process is one control-plane binary started by the harness; its stdout and stderr go to logPath.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done is closed
}

// startProcess starts bin with args, writing its output to logPath (appending, so retries keep history).
func startProcess(name, bin, logPath string, args []string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "### %s %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}

	// The process is started and reaped on one locked OS thread: on Linux the child gets a parent-death
	// signal when the thread that forked it exits, so it must be a thread that lives as long as the child.
	// This way the child is killed even if the test binary dies without running its cleanups.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine, after the child.
		if err := cmd.Start(); err != nil {
			logFile.Close()
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to stopGrace, then kills the process; it returns once it has been reaped.
func (p *process) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(stopGrace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitError describes how the process ended (the test then fails, which dumps the log tails).
func (p *process) exitError() error {
	return fmt.Errorf("testenv: %s exited early (%w); its log %s is dumped below", p.name, p.waitErr, p.logPath)
}

// logContains reports whether the process log contains s.
func (p *process) logContains(s string) bool {
	b, err := os.ReadFile(p.logPath)
	return err == nil && bytes.Contains(b, []byte(s))
}

// tailFile returns the last n lines of the file at path (at most 16 KiB).
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const maxBytes = 16 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxBytes {
		_, _ = f.Seek(st.Size()-maxBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
