package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// archiveEntry is one file of an archive: its name inside the archive and where it comes from.
type archiveEntry struct {
	Name string
	Path string
}

// writeArchive writes a .tar.gz or .zip that depends on the files' contents and mtime only: entries sorted by
// name, owner root, modes 0755 (executable sources) or 0644, no gzip name or time. The same binaries give the
// same archive, so the sha256 in krew.yaml can be checked by rebuilding.
func writeArchive(out string, mtime time.Time, entries []archiveEntry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for i, e := range entries {
		if strings.Contains(e.Name, "/") || strings.Contains(e.Name, `\`) || e.Name == "." || e.Name == ".." {
			return fmt.Errorf("entry %q: archives are flat (krew's files copy each from the archive root)", e.Name)
		}
		if i > 0 && entries[i-1].Name == e.Name {
			return fmt.Errorf("entry %q twice", e.Name)
		}
	}
	var buf bytes.Buffer
	var err error
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(&buf, mtime, entries)
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(&buf, mtime, entries)
	default:
		err = fmt.Errorf("%s: want a .tar.gz or .zip name", out)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(out, buf.Bytes())
}

func entryMode(path string) (os.FileMode, []byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, nil, err
	}
	if !st.Mode().IsRegular() {
		return 0, nil, fmt.Errorf("%s is not a plain file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if st.Mode()&0o111 != 0 {
		return 0o755, data, nil
	}
	return 0o644, data, nil
}

func writeTarGz(w io.Writer, mtime time.Time, entries []archiveEntry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		mode, data, err := entryMode(e.Path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: e.Name, Mode: int64(mode), Size: int64(len(data)),
			ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, mtime time.Time, entries []archiveEntry) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		mode, data, err := entryMode(e.Path)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(mode)
		f, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// archiveFile is a file found in an archive.
type archiveFile struct {
	Mode os.FileMode
	Size int64
}

// listArchive returns the plain files of a .tar.gz or .zip by name.
func listArchive(path string) (map[string]archiveFile, error) {
	files := map[string]archiveFile{}
	switch {
	case strings.HasSuffix(path, ".tar.gz"):
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tr := tar.NewReader(gz)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if hdr.Typeflag == tar.TypeReg {
				files[hdr.Name] = archiveFile{Mode: os.FileMode(hdr.Mode).Perm(), Size: hdr.Size}
			}
		}
	case strings.HasSuffix(path, ".zip"):
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.Mode().IsRegular() {
				files[f.Name] = archiveFile{Mode: f.Mode().Perm(), Size: int64(f.UncompressedSize64)}
			}
		}
	default:
		return nil, fmt.Errorf("%s: not a .tar.gz or .zip", path)
	}
	return files, nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeSums writes DIR/SHA256SUMS in sha256sum's format for every archive of DIR.
func writeSums(dir string) error {
	var names []string
	for _, pat := range []string{"*.tar.gz", "*.zip"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return err
		}
		names = append(names, m...)
	}
	if len(names) == 0 {
		return fmt.Errorf("no archives in %s", dir)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := sha256File(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(n))
	}
	return writeFileAtomic(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()))
}
