#!/usr/bin/env bash
# gpu-check.sh: run the agent against a real GPU's NVML and a real kube-apiserver (docs/agent.md "On a real GPU").
#
#   bash hack/gpu-check.sh pack        # here: build what the GPU machine needs into bin/gpucarry.tar.xz
#   bash hack/gpu-check.sh run [OUT]   # on the GPU machine, in the repository root: unpack and run the checks
#
# The GPU machine needs no Go and no network: `pack` builds the NVML binary (agent.BuildTags, cgo), the test binary
# of internal/agent/nvmlsource and takes etcd and kube-apiserver from hack/k8s-binaries.sh's cache. `run` prints
# nvidia-smi's view, then runs TestRealNVML (NVML read directly) and TestRealGPUAgent twice: the agent inside the
# test process, and the shipped binary's `agent` command (KUBECTL_HAMI_AGENT_BIN), and TestDevicePluginOnGPUs (the
# device plugin's ListAndWatch and Allocate through a fake kubelet for a pod the real extender placed). It never
# changes a GPU setting. With PyTorch (TORCH_PYTHON), a GPU process beside the agent in observe mode is checked too.
set -euo pipefail
cd "$(dirname "$0")/.."
archive=bin/gpucarry.tar.xz

case "${1:-}" in
pack)
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	k8s=$(bash hack/k8s-binaries.sh | tail -1)
	cp "$k8s/etcd" "$k8s/kube-apiserver" "$stage/"
	tags=$(sed -n 's/^const BuildTags = "\(.*\)"$/\1/p' internal/agent/source.go)
	CGO_ENABLED=1 go build -tags "$tags" -ldflags "-s -w" -o "$stage/kubectl-hami" ./cmd/kubectl-hami
	CGO_ENABLED=1 go test -c -o "$stage/nvmlsource.test" ./internal/agent/nvmlsource
	CGO_ENABLED=1 go test -c -o "$stage/migtest.test" ./internal/agent/deviceplugin/migtest
	strip "$stage"/* 2>/dev/null || true
	mkdir -p bin
	tar -C "$stage" -cf - . | xz -7 -T0 > "$archive"
	ls -l "$archive"
	;;
run)
	out=${2:-${OUT:-/tmp/gpu-check-out}}
	mkdir -p "$out"
	dir=$(mktemp -d)
	xz -dc "$archive" | tar -C "$dir" -xf -
	{
		date -u
		nvidia-smi -L || true
		nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,utilization.gpu,mig.mode.current,compute_mode,driver_version,pci.bus_id --format=csv || true
		nvidia-smi topo -m || true
	} 2>&1 | tee "$out/nvidia-smi.txt"
	export KUBECTL_HAMI_K8S_BIN=$dir
	rc=0
	(cd internal/agent/nvmlsource && "$dir/nvmlsource.test" -test.run 'TestRealNVML$|TestRealGPUAgent$' -test.v -test.count=1) \
		> "$out/in-process.txt" 2>&1 || rc=1
	(cd internal/agent/nvmlsource && KUBECTL_HAMI_AGENT_BIN=$dir/kubectl-hami "$dir/nvmlsource.test" -test.run 'TestRealGPUAgent$' -test.v -test.count=1) \
		> "$out/binary.txt" 2>&1 || rc=1
	(cd internal/agent/deviceplugin/migtest && "$dir/migtest.test" -test.run 'TestDevicePluginOnGPUs$' -test.v -test.count=1) \
		> "$out/device-plugin.txt" 2>&1 || rc=1
	# A GPU process beside the agent in observe mode (no API server needed): /usage and /metrics must show its
	# memory and the GPU's utilisation as nvidia-smi does. Needs PyTorch with CUDA (TORCH_PYTHON); skipped without.
	py=${TORCH_PYTHON:-python3}
	if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		printf 'apiVersion: v1\nkind: Config\nclusters: [{name: n, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: n, user: {token: n}}]\ncontexts: [{name: n, context: {cluster: n, user: n}}]\ncurrent-context: n\n' > "$dir/kubeconfig"
		"$dir/kubectl-hami" agent --kubeconfig "$dir/kubeconfig" --mode observe --pod-lookup=false --configmap "" \
			--node-name gpu-real --listen 127.0.0.1:9394 > "$out/agent-observe.log" 2>&1 &
		agent=$!
		"$py" -c 'import torch, time
x = torch.empty(4 * 1024**3 // 4, device="cuda")
a = torch.randn(8192, 8192, device="cuda")
t = time.time()
while time.time() - t < 25:
    b = a @ a
torch.cuda.synchronize()' > "$out/torch.log" 2>&1 &
		proc=$!
		sleep 12
		{
			echo "process $proc"
			nvidia-smi --query-compute-apps=pid,used_memory --format=csv
			nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv
			curl -s 127.0.0.1:9394/usage
			curl -s 127.0.0.1:9394/metrics | grep '^hami_host'
		} 2>&1 | tee "$out/process.txt"
		curl -s 127.0.0.1:9394/usage | grep -q "\"pid\": $proc," || { echo "FAIL: /usage does not list process $proc"; rc=1; }
		wait "$proc" || rc=1
		kill -INT "$agent"; wait "$agent" || rc=1
	else
		echo "no PyTorch with CUDA ($py): the process check is left out"
	fi
	grep -E '^(=== RUN|--- |PASS|FAIL|ok)|realgpu_test|nvml_test|WARN|ERROR' "$out/in-process.txt" "$out/binary.txt" "$out/device-plugin.txt" | grep -v 'level=INFO\|level=DEBUG\|"level":"INFO"' | cut -c1-400
	exit $rc
	;;
*)
	echo "usage: $0 pack | run [OUT]" >&2
	exit 2
	;;
esac
