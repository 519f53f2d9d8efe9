package snapshot
import ("testing";"runtime";"os";"runtime/pprof";"github.com/kubectl-hami/kubectl-hami/internal/engine")
func heap() uint64 { runtime.GC(); var m runtime.MemStats; runtime.ReadMemStats(&m); return m.HeapAlloc>>20 }
func TestZZMem(t *testing.T){
	p := os.Getenv("ZZFILE"); if p=="" {t.Skip()}
	s, err := LoadFile(p); if err!=nil {t.Fatal(err)}
	t.Log("snapshot MiB", heap())
	f, _ := os.Create("/tmp/stream/heap.out"); pprof.WriteHeapProfile(f); f.Close()
	c, _ := s.Cluster(engine.DefaultConfig())
	t.Log("with cluster MiB", heap())
	s.Pods = nil; s.Nodes=nil
	t.Log("cluster only MiB", heap(), len(c.NodeNames()))
}
