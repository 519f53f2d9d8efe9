package build

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
)

const (
	modulePath    = "github.com/kubectl-hami/kubectl-hami"
	imagePrefix   = "ghcr.io/kubectl-hami/"
	binaryInImage = "/usr/local/bin/kubectl-hami"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd  string // upper case
	Args string
	Line int
}

// stage is one FROM and what follows it.
type stage struct {
	From         string // as written
	Base         string // with the global ARGs' defaults substituted
	Name         string
	Platform     string
	Instructions []instruction
}

type dockerfile struct {
	Path       string
	GlobalArgs map[string]string
	Stages     []stage
}

// parseDockerfile reads the subset of the Dockerfile syntax these files use: comments, parser directives,
// continuation lines, global ARGs before the first FROM, and stages.
func parseDockerfile(path string) (*dockerfile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &dockerfile{Path: path, GlobalArgs: map[string]string{}}
	sc := bufio.NewScanner(f)
	var cur strings.Builder
	lineNo, start := 0, 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start}
		if strings.Contains(in.Args, "<<") && in.Cmd == "RUN" {
			return fmt.Errorf("%s:%d: heredocs are not understood by this test", path, in.Line)
		}
		switch {
		case in.Cmd == "FROM":
			st := stage{From: in.Args}
			fields := strings.Fields(in.Args)
			for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
				if v, ok := strings.CutPrefix(fields[0], "--platform="); ok {
					st.Platform = v
				}
				fields = fields[1:]
			}
			if len(fields) == 0 {
				return fmt.Errorf("%s:%d: FROM without an image", path, in.Line)
			}
			st.Base = expandArgs(fields[0], d.GlobalArgs)
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.Name = fields[2]
			} else if len(fields) != 1 {
				return fmt.Errorf("%s:%d: cannot read FROM %s", path, in.Line, in.Args)
			}
			d.Stages = append(d.Stages, st)
		case len(d.Stages) == 0:
			if in.Cmd != "ARG" {
				return fmt.Errorf("%s:%d: %s before the first FROM", path, in.Line, in.Cmd)
			}
			name, def, _ := strings.Cut(in.Args, "=")
			d.GlobalArgs[name] = def
		default:
			last := &d.Stages[len(d.Stages)-1]
			last.Instructions = append(last.Instructions, in)
		}
		return nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue // comments and parser directives, also inside continued instructions
		}
		if cur.Len() == 0 {
			if trimmed == "" {
				continue
			}
			start = lineNo
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("%s: ends inside a continued instruction", path)
	}
	if len(d.Stages) == 0 {
		return nil, fmt.Errorf("%s: no FROM", path)
	}
	return d, nil
}

var argRef = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

func expandArgs(s string, args map[string]string) string {
	return argRef.ReplaceAllStringFunc(s, func(m string) string {
		name := strings.Trim(m, "${}")
		if v, ok := args[name]; ok {
			return v
		}
		return m
	})
}

func (s *stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.Instructions {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

func (s *stage) last(cmd string) (instruction, bool) {
	ins := s.all(cmd)
	if len(ins) == 0 {
		return instruction{}, false
	}
	return ins[len(ins)-1], true
}

// keyValues reads LABEL and ENV arguments (key="value" pairs).
var keyValue = regexp.MustCompile(`([\w.\-]+)=("(?:[^"\\]|\\.)*"|\S+)`)

func (s *stage) keyValues(cmd string) map[string]string {
	out := map[string]string{}
	for _, in := range s.all(cmd) {
		for _, m := range keyValue.FindAllStringSubmatch(in.Args, -1) {
			v := m[2]
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			out[m[1]] = v
		}
	}
	return out
}

// execForm reads a JSON-array ENTRYPOINT or CMD.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(in.Args), &out); err != nil {
		t.Fatalf("line %d: %s %s is not in exec (JSON array) form", in.Line, in.Cmd, in.Args)
	}
	return out
}

// image is what one Dockerfile builds.
type image struct {
	file       string
	repository string // ghcr.io/kubectl-hami/<org.opencontainers.image.title>
	subcommand string // CMD[0]
	uid        int    // final USER
}

type imageSpec struct {
	file       string
	title      string
	subcommand string
	cgo        string
	check      func(t *testing.T, final *stage, build *stage)
}

var imageSpecs = []imageSpec{
	{
		file: "Dockerfile.extender", title: "kubectl-hami", subcommand: "serve-extender", cgo: "0",
		check: func(t *testing.T, final, build *stage) {
			if build.Platform != "$BUILDPLATFORM" {
				t.Errorf("the pure-Go build should run on $BUILDPLATFORM and cross-compile (FROM --platform=$BUILDPLATFORM), got %q", build.Platform)
			}
			run := buildRun(t, build)
			for _, want := range []string{"GOOS=$TARGETOS", "GOARCH=$TARGETARCH"} {
				if !strings.Contains(run.Args, want) {
					t.Errorf("the build RUN does not set %s", want)
				}
			}
			if !strings.HasPrefix(final.Base, "gcr.io/distroless/static") {
				t.Errorf("a CGO_ENABLED=0 binary runs on distroless static, not %s", final.Base)
			}
		},
	},
	{
		file: "Dockerfile.agent", title: "kubectl-hami-agent", subcommand: "agent", cgo: "1",
		check: func(t *testing.T, final, build *stage) {
			if strings.Contains(build.Platform, "BUILDPLATFORM") {
				t.Errorf("a cgo build must run on the target platform (no cross C compiler), not --platform=%s", build.Platform)
			}
			if !strings.HasPrefix(final.Base, "nvidia/cuda:") || !strings.Contains(final.Base, "-base-") {
				t.Errorf("the agent runs on NVIDIA's CUDA base image (what the NVIDIA container runtime injects NVML into), not %s", final.Base)
			}
			if !strings.Contains(final.Base, "ubuntu") {
				t.Errorf("final base %s: want an Ubuntu (glibc) CUDA base, as new as the bookworm builder's glibc", final.Base)
			}
			env := final.keyValues("ENV")
			if env["NVIDIA_VISIBLE_DEVICES"] == "" {
				t.Error("ENV NVIDIA_VISIBLE_DEVICES is not set: the NVIDIA runtime would expose no GPU")
			}
			if !strings.Contains(env["NVIDIA_DRIVER_CAPABILITIES"], "utility") && env["NVIDIA_DRIVER_CAPABILITIES"] != "all" {
				t.Errorf("ENV NVIDIA_DRIVER_CAPABILITIES=%q lacks utility (NVML)", env["NVIDIA_DRIVER_CAPABILITIES"])
			}
			run := buildRun(t, build)
			if !strings.Contains(run.Args, "-tags "+agent.BuildTags+" ") {
				t.Errorf("the build lacks -tags %s (agent.BuildTags): the image's agent would have no NVML", agent.BuildTags)
			}
			if !strings.Contains(run.Args, "-extldflags=-Wl,-z,lazy") {
				t.Error("the cgo build lacks -extldflags=-Wl,-z,lazy: the binary would not start where NVML's symbols are unresolved")
			}
			if !strings.Contains(build.Base, "bookworm") {
				t.Errorf("builder %s: build on Debian bookworm (glibc 2.36), not newer than the Ubuntu 24.04 runtime", build.Base)
			}
		},
	},
}

func buildRun(t *testing.T, build *stage) instruction {
	t.Helper()
	for _, in := range build.all("RUN") {
		if strings.Contains(in.Args, "go build") {
			return in
		}
	}
	t.Fatalf("stage %s has no RUN ... go build", build.Name)
	return instruction{}
}

func goDirective(t *testing.T) string {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// makefileStampVars are the -X variables the Makefile's LDFLAGS stamps.
func makefileStampVars(t *testing.T) []string {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LDFLAGS\s*:?=\s*(.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no LDFLAGS")
	}
	var vars []string
	for _, x := range regexp.MustCompile(`-X \$\(PKG\)(\S+?)=`).FindAllSubmatch(m[1], -1) {
		vars = append(vars, modulePath+string(x[1]))
	}
	if len(vars) == 0 {
		t.Fatalf("no -X $(PKG)/...= in the Makefile's LDFLAGS: %s", m[1])
	}
	return vars
}

func krewVersion(t *testing.T) string {
	b, err := os.ReadFile("../krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version string `json:"version"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil || m.Spec.Version == "" {
		t.Fatalf("krew.yaml: no spec.version (%v)", err)
	}
	return m.Spec.Version
}

// checkImage checks one Dockerfile and returns what it builds.
func checkImage(t *testing.T, spec imageSpec) image {
	d, err := parseDockerfile(spec.file)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Stages) < 2 {
		t.Fatalf("%d stage(s): want a multi-stage build (build, then a runtime image without the toolchain)", len(d.Stages))
	}
	build, final := &d.Stages[0], &d.Stages[len(d.Stages)-1]

	// The builder: the Go of go.mod, the module's main package, stamped like `make build`.
	if got, want := d.GlobalArgs["GO_VERSION"], goDirective(t); got != want {
		t.Errorf("ARG GO_VERSION=%s, want go.mod's go %s", got, want)
	}
	if !strings.HasPrefix(build.From, "golang:${GO_VERSION}") && !strings.Contains(build.From, " golang:${GO_VERSION}") {
		t.Errorf("the build stage is FROM %s, want golang:${GO_VERSION}-...", build.From)
	}
	if build.Name == "" {
		t.Error("the build stage has no name (FROM ... AS build)")
	}
	run := buildRun(t, build)
	for _, want := range []string{"./cmd/kubectl-hami", "-trimpath", "CGO_ENABLED=" + spec.cgo + " "} {
		if !strings.Contains(run.Args+" ", want) {
			t.Errorf("line %d: the build RUN lacks %q: %s", run.Line, strings.TrimSpace(want), run.Args)
		}
	}
	for _, v := range makefileStampVars(t) {
		name := v[strings.LastIndex(v, ".")+1:]
		if want := fmt.Sprintf("-X %s=${%s}", v, strings.ToUpper(name)); !strings.Contains(run.Args, want) {
			t.Errorf("the build does not stamp %s as the Makefile does: want %q", v, want)
		}
		if _, ok := build.keyValues("ARG")[strings.ToUpper(name)]; !ok {
			t.Errorf("the build stage has no ARG %s=default for the stamp", strings.ToUpper(name))
		}
	}
	for _, in := range build.all("COPY") {
		fields := strings.Fields(in.Args)
		for _, src := range fields[:len(fields)-1] {
			if strings.HasPrefix(src, "--") || src == "." {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", src)); err != nil {
				t.Errorf("line %d: COPY %s: not in the repository", in.Line, src)
			}
		}
	}

	// The runtime image: pinned base, the binary from the build stage, non-root, binary as entrypoint.
	if strings.HasSuffix(final.Base, ":latest") || !strings.ContainsAny(final.Base[strings.LastIndex(final.Base, "/")+1:], ":@") {
		t.Errorf("final base %s is not pinned to a tag or digest", final.Base)
	}
	if strings.Contains(final.Base, "$") {
		t.Errorf("final base %s uses an ARG without a default", final.Base)
	}
	copied := false
	for _, in := range final.all("COPY") {
		if strings.Contains(in.Args, "--from="+build.Name+" ") && strings.HasSuffix(in.Args, " "+binaryInImage) {
			copied = true
		}
	}
	if !copied {
		t.Errorf("the final stage does not COPY --from=%s ... %s", build.Name, binaryInImage)
	}
	user, ok := final.last("USER")
	if !ok {
		t.Fatal("the final stage sets no USER: the image would run as root")
	}
	uidText, _, _ := strings.Cut(user.Args, ":")
	uid, err := strconv.Atoi(uidText)
	if err != nil {
		t.Errorf("USER %s: use a numeric UID, so that runAsNonRoot can be verified by the kubelet", user.Args)
	} else if uid == 0 {
		t.Error("USER 0: the image runs as root")
	}
	ep, ok := final.last("ENTRYPOINT")
	if !ok {
		t.Fatal("no ENTRYPOINT")
	}
	if got := execForm(t, ep); len(got) != 1 || got[0] != binaryInImage {
		t.Errorf("ENTRYPOINT %v, want [%q]: deploy/ passes the subcommand as args", got, binaryInImage)
	}
	cmd, ok := final.last("CMD")
	if !ok {
		t.Fatal("no CMD")
	}
	if got := execForm(t, cmd); len(got) == 0 || got[0] != spec.subcommand {
		t.Errorf("CMD %v, want [%q ...]", got, spec.subcommand)
	}
	labels := final.keyValues("LABEL")
	if labels["org.opencontainers.image.title"] != spec.title {
		t.Errorf("LABEL org.opencontainers.image.title=%q, want %q (the image is %s%s)", labels["org.opencontainers.image.title"], spec.title, imagePrefix, spec.title)
	}
	if labels["org.opencontainers.image.source"] != "https://"+modulePath {
		t.Errorf("LABEL org.opencontainers.image.source=%q, want https://%s (links the ghcr.io package to the repository)", labels["org.opencontainers.image.source"], modulePath)
	}
	if labels["org.opencontainers.image.licenses"] != "Apache-2.0" {
		t.Errorf("LABEL org.opencontainers.image.licenses=%q, want Apache-2.0", labels["org.opencontainers.image.licenses"])
	}
	spec.check(t, final, build)

	// The build context: BuildKit reads <Dockerfile>.dockerignore; it must keep what the build needs.
	ignore, err := os.ReadFile(spec.file + ".dockerignore")
	if err != nil {
		t.Errorf("%s.dockerignore: %v (the whole repository, bin/ and dist/ included, would be the context)", spec.file, err)
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal", "examples", "LICENSE"} {
			if line == needed || line == needed+"/" || line == "*" || line == "**" {
				t.Errorf("%s.dockerignore excludes %s, which the build needs", spec.file, needed)
			}
		}
	}
	return image{file: spec.file, repository: imagePrefix + spec.title, subcommand: spec.subcommand, uid: uid}
}

func TestDockerfiles(t *testing.T) {
	for _, spec := range imageSpecs {
		t.Run(spec.file, func(t *testing.T) { checkImage(t, spec) })
	}
}

// TestDistBuildsTheAgentWithNVML: make dist's cgo build (hack/dist.sh) uses the build tags that put NVML in.
func TestDistBuildsTheAgentWithNVML(t *testing.T) {
	b, err := os.ReadFile("../hack/dist.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nNVML_TAGS=" + agent.BuildTags + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("hack/dist.sh does not set NVML_TAGS=%s (agent.BuildTags): the linux/amd64 archive's agent would have no NVML", agent.BuildTags)
	}
}

// TestParseDockerfile: the parser reads continuations, comments inside them, global ARGs and stages.
func TestParseDockerfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Dockerfile")
	text := `# syntax=docker/dockerfile:1
ARG BASE=alpine:3.20
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN echo a \
# a comment inside
    && echo b
FROM ${BASE}
USER 1000
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := parseDockerfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Stages) != 2 || d.Stages[0].Name != "build" || d.Stages[0].Platform != "$BUILDPLATFORM" || d.Stages[1].Base != "alpine:3.20" {
		t.Fatalf("stages: %+v", d.Stages)
	}
	run := d.Stages[0].Instructions[0]
	if run.Cmd != "RUN" || strings.Join(strings.Fields(run.Args), " ") != "echo a && echo b" || run.Line != 4 {
		t.Fatalf("RUN: %+v", run)
	}
	if err := os.WriteFile(path, []byte("RUN true\nFROM x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseDockerfile(path); err == nil {
		t.Fatal("RUN before FROM accepted")
	}
}

// container is a container of a pod template in deploy/.
type container struct {
	file, object, name string
	image              string
	command, args      []string
	runAsUser          *int64
	runAsNonRoot       *bool
}

// deployContainers reads every container of every pod template in deploy/, and kustomize image overrides. The
// Helm chart's templates are Go templates, not YAML: deploy/helm_test.go checks that they render to the same
// objects as the kustomize bases read here, and the chart's image tags are checked against its appVersion.
func deployContainers(t *testing.T) ([]container, []map[string]any) {
	var out []container
	var overrides []map[string]any
	err := filepath.WalkDir("../deploy", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == "templates" && strings.Contains(filepath.ToSlash(path), "/chart/") {
			return filepath.SkipDir
		}
		if e.IsDir() || (!strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				return fmt.Errorf("%s document %d: %w", path, i+1, err)
			}
			if obj == nil {
				continue
			}
			kind, _ := obj["kind"].(string)
			if kind == "Kustomization" {
				if imgs, ok := obj["images"].([]any); ok {
					for _, im := range imgs {
						if m, ok := im.(map[string]any); ok {
							overrides = append(overrides, m)
						}
					}
				}
				continue
			}
			var podSpec map[string]any
			switch kind {
			case "Pod":
				podSpec = dig(obj, "spec")
			case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
				podSpec = dig(obj, "spec", "template", "spec")
			case "CronJob":
				podSpec = dig(obj, "spec", "jobTemplate", "spec", "template", "spec")
			}
			if podSpec == nil {
				continue
			}
			name, _ := dig(obj, "metadata")["name"].(string)
			podUser, podNonRoot := securityContext(dig(podSpec, "securityContext"))
			for _, key := range []string{"initContainers", "containers"} {
				list, _ := podSpec[key].([]any)
				for _, c := range list {
					cm, _ := c.(map[string]any)
					ct := container{file: path, object: kind + "/" + name, runAsUser: podUser, runAsNonRoot: podNonRoot}
					ct.name, _ = cm["name"].(string)
					ct.image, _ = cm["image"].(string)
					ct.command, ct.args = strings_(cm["command"]), strings_(cm["args"])
					if u, nr := securityContext(dig(cm, "securityContext")); u != nil || nr != nil {
						if u != nil {
							ct.runAsUser = u
						}
						if nr != nil {
							ct.runAsNonRoot = nr
						}
					}
					out = append(out, ct)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, overrides
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

func strings_(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func securityContext(sc map[string]any) (*int64, *bool) {
	var user *int64
	var nonRoot *bool
	if v, ok := sc["runAsUser"].(float64); ok {
		u := int64(v)
		user = &u
	}
	if v, ok := sc["runAsNonRoot"].(bool); ok {
		nonRoot = &v
	}
	return user, nonRoot
}

// TestDeployUsesTheseImages: every kubectl-hami container in deploy/ runs an image these Dockerfiles build,
// tagged with the release version, with the subcommand that image is built for, as the image's user.
func TestDeployUsesTheseImages(t *testing.T) {
	if _, err := os.Stat("../deploy"); os.IsNotExist(err) {
		t.Skip("no deploy/ folder: nothing references the images yet")
	}
	images := map[string]image{}
	for _, spec := range imageSpecs {
		var im image
		t.Run(spec.file, func(t *testing.T) { im = checkImage(t, spec) })
		images[im.repository] = im
	}
	version := krewVersion(t)
	containers, overrides := deployContainers(t)
	used := map[string]bool{}
	for _, c := range containers {
		if !strings.HasPrefix(c.image, imagePrefix) {
			continue
		}
		where := fmt.Sprintf("%s %s container %s", c.file, c.object, c.name)
		repo, tag, _ := strings.Cut(c.image, ":")
		im, ok := images[repo]
		if !ok {
			t.Errorf("%s: image %s is built by no Dockerfile of build/ (they build %s)", where, c.image, strings.Join(keys(images), ", "))
			continue
		}
		used[repo] = true
		if tag != version {
			t.Errorf("%s: image tag %q, want the release version %s (krew.yaml spec.version)", where, tag, version)
		}
		if len(c.command) > 0 && c.command[0] != binaryInImage && c.command[0] != "kubectl-hami" {
			t.Errorf("%s: command %v replaces the image's entrypoint %s", where, c.command, binaryInImage)
		}
		args := c.args
		if len(c.command) > 0 {
			args = append(c.command[1:], args...)
		}
		if len(args) > 0 && args[0] != im.subcommand {
			t.Errorf("%s: runs %q on %s, which is built for %q (%s)", where, args[0], repo, im.subcommand, im.file)
		}
		if c.runAsUser != nil && *c.runAsUser != int64(im.uid) {
			t.Errorf("%s: runAsUser %d, but %s runs as %d", where, *c.runAsUser, im.file, im.uid)
		}
		if c.runAsNonRoot != nil && *c.runAsNonRoot && im.uid == 0 {
			t.Errorf("%s: runAsNonRoot, but %s runs as root", where, im.file)
		}
	}
	for _, o := range overrides {
		name, _ := o["name"].(string)
		if !strings.HasPrefix(name, imagePrefix) {
			continue
		}
		if _, ok := images[name]; !ok {
			t.Errorf("kustomize images: %s is built by no Dockerfile of build/", name)
		}
		if n, _ := o["newName"].(string); n != "" && !strings.HasPrefix(n, imagePrefix) {
			t.Logf("kustomize images: %s renamed to %s", name, n)
		}
		if tag, _ := o["newTag"].(string); tag != "" && tag != version {
			t.Errorf("kustomize images: %s newTag %s, want %s", name, tag, version)
		}
	}
	if !used[imagePrefix+"kubectl-hami"] {
		t.Errorf("no container of deploy/ runs %skubectl-hami (the extender)", imagePrefix)
	}
	if _, err := os.Stat("../deploy/agent"); err == nil && !used[imagePrefix+"kubectl-hami-agent"] {
		t.Errorf("deploy/agent exists but no container runs %skubectl-hami-agent", imagePrefix)
	}
}

func keys(m map[string]image) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
