// Command release is the release tooling behind `make dist`, `make krew-manifest` and `make test-release`:
// reproducible archives, SHA256SUMS, the krew manifest rendered from the real archives, and a validator for
// krew's rules (the ones krew's own validate-krew-manifest applies, plus the krew-index review rules of
// docs: short description length, wrapped description, LICENSE shipped, one archive per platform).
//
//	release archive  -out FILE.tar.gz|FILE.zip [-mtime UNIX] NAME=PATH...
//	release sums     -dir DIR
//	release manifest -template hack/krew.yaml.tmpl -version vX.Y.Z -dist DIR [-uri-base URL] [-platforms LIST] -out FILE
//	release validate [-dist DIR] [-release] [-allow-loopback-http] FILE
//	release serve    -dir DIR -addr-file FILE
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "archive":
		err = cmdArchive(args)
	case "sums":
		err = cmdSums(args)
	case "manifest":
		err = cmdManifest(args)
	case "validate":
		err = cmdValidate(args)
	case "serve":
		err = cmdServe(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release archive|sums|manifest|validate|serve [flags] (see hack/release/main.go)")
	os.Exit(2)
}

func cmdArchive(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ExitOnError)
	out := fs.String("out", "", "archive to write (.tar.gz or .zip)")
	mtime := fs.Int64("mtime", 0, "modification time of every entry, Unix seconds (SOURCE_DATE_EPOCH)")
	_ = fs.Parse(args)
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("want -out FILE and at least one NAME=PATH")
	}
	var entries []archiveEntry
	for _, a := range fs.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("%q: want NAME=PATH", a)
		}
		entries = append(entries, archiveEntry{Name: name, Path: path})
	}
	return writeArchive(*out, time.Unix(*mtime, 0).UTC(), entries)
}

func cmdSums(args []string) error {
	fs := flag.NewFlagSet("sums", flag.ExitOnError)
	dir := fs.String("dir", "dist", "folder of archives")
	_ = fs.Parse(args)
	return writeSums(*dir)
}

func cmdManifest(args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ExitOnError)
	tmpl := fs.String("template", "hack/krew.yaml.tmpl", "manifest template")
	version := fs.String("version", "", "plugin version, with a leading v")
	dist := fs.String("dist", "dist", "folder of the archives")
	uriBase := fs.String("uri-base", "", "URL the archives are downloaded from (default: the GitHub release of -version)")
	platforms := fs.String("platforms", strings.Join(releasePlatforms, ","), "platforms (os/arch) that must have an archive")
	out := fs.String("out", "", "manifest to write")
	_ = fs.Parse(args)
	if *out == "" || *version == "" {
		return fmt.Errorf("want -version and -out")
	}
	want := strings.Split(*platforms, ",")
	data, err := manifestData(*version, *dist, *uriBase, want)
	if err != nil {
		return err
	}
	text, err := renderManifest(*tmpl, data)
	if err != nil {
		return err
	}
	opts := validateOptions{Dist: *dist, Release: *uriBase == "", AllowLoopbackHTTP: *uriBase != ""}
	if errs := validateManifest(text, opts); len(errs) > 0 {
		return fmt.Errorf("the rendered manifest breaks krew's rules:\n  %s", joinErrors(errs))
	}
	if err := writeFileAtomic(*out, text); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %s, %d platforms\n", *out, *version, len(data.Platforms))
	return nil
}

func cmdValidate(args []string) error {
	fs := flag.NewFlagSet("validate", flag.ExitOnError)
	dist := fs.String("dist", "", "also check each uri's archive in this folder: sha256, bin and files")
	release := fs.Bool("release", false, "uris must be the GitHub release downloads of spec.version")
	loopback := fs.Bool("allow-loopback-http", false, "accept http://127.0.0.1 uris (the release test's local server)")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return fmt.Errorf("want one manifest file")
	}
	text, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	if errs := validateManifest(text, validateOptions{Dist: *dist, Release: *release, AllowLoopbackHTTP: *loopback}); len(errs) > 0 {
		return fmt.Errorf("%s breaks krew's rules:\n  %s", fs.Arg(0), joinErrors(errs))
	}
	fmt.Fprintf(os.Stderr, "%s: valid\n", fs.Arg(0))
	return nil
}

func joinErrors(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n  ")
}

// writeFileAtomic writes data to path (mode 0644) through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
