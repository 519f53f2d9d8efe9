//go:build linux && cgo

// Command idleagent runs the node agent in full mode over go-nvml's 8-GPU DGX A100 mock (every GPU busy with three
// processes) against the cluster of --kubeconfig, so that BenchmarkIdleAgentProcess can measure the memory of an
// agent process that holds nothing else. It is a test tool, not part of kubectl-hami.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlmock"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlsource"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	node := flag.String("node", "", "Node to register")
	listen := flag.String("listen", "127.0.0.1:9394", "HTTP address")
	interval := flag.Duration("interval", 30*time.Second, "registration period")
	flag.Parse()
	if err := run(*kubeconfig, *node, *listen, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "idleagent:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, node, listen string, interval time.Duration) error {
	dir, err := os.MkdirTemp("", "idleagent")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m, err := nvmlmock.New(dgxa100.New(), dir+"/sys", dir+"/proc")
	if err != nil {
		return err
	}
	if err := m.Busy(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := nvmlsource.NewFrom(m.Server, agent.NVMLOptions{SysRoot: dir + "/sys", Log: log})
	if err != nil {
		return err
	}
	defer src.Close()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.ProcRoot, o.RegisterInterval, o.ConfigMap, o.Log = node, listen, dir+"/proc", interval, "", log
	a, err := agent.New(src, cs, o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return a.Run(ctx)
}
