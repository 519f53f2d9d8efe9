package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
)

// cmdServe serves a folder on a free loopback port and writes its base URL to -addr-file: the release test
// points a manifest's uris at it so that krew's validate-krew-manifest really downloads every archive.
// It runs until it is killed.
func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("dir", "dist", "folder to serve")
	addrFile := fs.String("addr-file", "", "file to write the base URL to once listening")
	_ = fs.Parse(args)
	if *addrFile == "" {
		return fmt.Errorf("want -addr-file")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://%s/", ln.Addr())
	if err := writeFileAtomic(*addrFile, []byte(base+"\n")); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "serving %s at %s\n", *dir, base)
	return http.Serve(ln, http.FileServer(http.Dir(*dir)))
}
