package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDist writes archives of version for every release platform, from small stand-in files.
func fakeDist(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	src := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin := write("bin", "#!/bin/sh\necho kubectl-hami\n", 0o755)
	lic := write("LICENSE", "Apache License 2.0\n", 0o644)
	comp := write("complete", "#!/bin/sh\n", 0o755)
	for _, p := range releasePlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		entries := []archiveEntry{{Name: binFor(goos), Path: bin}, {Name: "LICENSE", Path: lic}}
		if goos != "windows" {
			entries = append(entries, archiveEntry{Name: "kubectl_complete-hami", Path: comp})
		}
		if err := writeArchive(filepath.Join(dir, archiveName(version, goos, goarch)), time.Unix(1700000000, 0), entries); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func renderFake(t *testing.T, version string) ([]byte, string) {
	t.Helper()
	dist := fakeDist(t, version)
	d, err := manifestData(version, dist, "", releasePlatforms)
	if err != nil {
		t.Fatal(err)
	}
	text, err := renderManifest("../krew.yaml.tmpl", d)
	if err != nil {
		t.Fatal(err)
	}
	return text, dist
}

func TestRenderedManifestIsValid(t *testing.T) {
	text, dist := renderFake(t, "v1.2.3")
	if errs := validateManifest(text, validateOptions{Dist: dist, Release: true}); len(errs) > 0 {
		t.Fatalf("rendered manifest invalid:\n%s\n%s", joinErrors(errs), text)
	}
	for _, want := range []string{
		"version: v1.2.3",
		"uri: https://github.com/kubectl-hami/kubectl-hami/releases/download/v1.2.3/kubectl-hami_v1.2.3_windows_amd64.zip",
		"bin: kubectl-hami.exe",
		"    - from: kubectl_complete-hami\n      to: .",
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("rendered manifest lacks %q", want)
		}
	}
}

// TestCommittedManifest: krew.yaml meets krew's rules with release uris, and is what the current template
// renders for its own platforms (so a template change without `make krew-manifest` fails here).
func TestCommittedManifest(t *testing.T) {
	p, text, err := readManifest("../../krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := validateManifest(text, validateOptions{Release: true}); len(errs) > 0 {
		t.Fatalf("krew.yaml breaks krew's rules:\n  %s", joinErrors(errs))
	}
	var got []string
	for _, pl := range p.Spec.Platforms {
		got = append(got, pl.Selector.MatchLabels["os"]+"/"+pl.Selector.MatchLabels["arch"])
	}
	if strings.Join(got, ",") != strings.Join(releasePlatforms, ",") {
		t.Errorf("krew.yaml platforms %v, want %v", got, releasePlatforms)
	}
	again, err := renderManifest("../krew.yaml.tmpl", dataFromManifest(p))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, text) {
		t.Fatal("krew.yaml is not what hack/krew.yaml.tmpl renders: run make krew-manifest VERSION=" + p.Spec.Version)
	}
}

func TestValidateRejects(t *testing.T) {
	good, dist := renderFake(t, "v0.1.0")
	cases := []struct {
		name, old, new, want string
	}{
		{"api version", "v1alpha2", "v1alpha1", "apiVersion"},
		{"kind", "kind: Plugin", "kind: Plugins", "kind is"},
		{"name", "name: hami", "name: hami-x", "metadata.name"},
		{"version without v", "version: v0.1.0", "version: 0.1.0", "spec.version"},
		{"short description too long", "shortDescription: Explain and check HAMi shared-GPU scheduling",
			"shortDescription: Explain and check HAMi shared-GPU scheduling for every cluster", "at most 50"},
		{"description not wrapped", "    For clusters that share GPUs with HAMi",
			"    For clusters that share GPUs with HAMi and a very long line that goes beyond eighty columns", "wrap at 80"},
		{"usage example", "    For clusters that share GPUs with HAMi", "    $ kubectl hami why-pending x\n    For clusters", "usage example"},
		{"unknown field", "  homepage:", "  website: x\n  homepage:", "unknown field"},
		{"extra selector key", "        os: linux\n        arch: amd64", "        os: linux\n        arch: amd64\n        distro: debian", `key "distro"`},
		{"overlap", "        os: linux\n        arch: arm64", "        os: linux\n        arch: amd64", "overlap"},
		{"os only", "        os: darwin\n        arch: arm64", "        os: darwin", "needs both os and arch"},
		{"bad sha", "sha256: ", "sha256: ABC", "64 lowercase hex"},
		{"no license", "    - from: LICENSE\n      to: .\n", "", "no LICENSE"},
		{"windows bin", "bin: kubectl-hami.exe", "bin: kubectl-hami", ".exe"},
		{"http", "uri: https://", "uri: http://", "https"},
		{"not the release", "releases/download/v0.1.0/kubectl-hami_v0.1.0_linux_amd64", "releases/download/v0.1.0/kubectl-hami_v0.1.0_linux_amd64_x", "want"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(c.old)) {
				t.Fatalf("the rendered manifest lacks %q", c.old)
			}
			bad := bytes.Replace(good, []byte(c.old), []byte(c.new), 1)
			errs := validateManifest(bad, validateOptions{Release: true})
			if !strings.Contains(joinErrors(errs), c.want) {
				t.Fatalf("want an error with %q, got:\n  %s", c.want, joinErrors(errs))
			}
		})
	}

	// Against the archives: a sha256 that is not the archive's, a file the archive lacks.
	other := strings.Repeat("0", 64)
	lines := strings.Split(string(good), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "sha256:") {
			lines[i] = "    sha256: " + other
			break
		}
	}
	errs := validateManifest([]byte(strings.Join(lines, "\n")), validateOptions{Dist: dist})
	if !strings.Contains(joinErrors(errs), "but "+filepath.Join(dist, "kubectl-hami_v0.1.0_linux_amd64.tar.gz")+" has") {
		t.Fatalf("a wrong sha256 went through: %s", joinErrors(errs))
	}
	bad := bytes.Replace(good, []byte("    - from: LICENSE\n"), []byte("    - from: LICENSE.txt\n"), 1)
	if errs := validateManifest(bad, validateOptions{Dist: dist}); !strings.Contains(joinErrors(errs), "LICENSE.txt is not in") {
		t.Fatalf("a file missing from the archive went through: %s", joinErrors(errs))
	}
}

func TestArchivesAreReproducible(t *testing.T) {
	a, b := fakeDist(t, "v0.1.0"), fakeDist(t, "v0.1.0")
	for _, p := range releasePlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name := archiveName("v0.1.0", goos, goarch)
		sa, err := sha256File(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := sha256File(filepath.Join(b, name))
		if sa != sb {
			t.Errorf("%s differs between two builds of the same files", name)
		}
		files, err := listArchive(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		bin := files[binFor(goos)]
		if bin.Mode != 0o755 || files["LICENSE"].Mode != 0o644 {
			t.Errorf("%s: modes %v", name, files)
		}
	}
	if err := writeSums(a); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sums), "\n"); n != len(releasePlatforms) {
		t.Fatalf("SHA256SUMS has %d lines:\n%s", n, sums)
	}
	if err := writeArchive(filepath.Join(a, "x.tar.gz"), time.Unix(0, 0), []archiveEntry{{Name: "dir/file", Path: "main.go"}}); err == nil {
		t.Fatal("a nested entry was accepted: krew's files copy from the archive root")
	}
}
