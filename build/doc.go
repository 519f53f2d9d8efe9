// Package build holds the container image build files of kubectl-hami: Dockerfile.extender (image
// ghcr.io/kubectl-hami/kubectl-hami, serve-extender) and Dockerfile.agent (image
// ghcr.io/kubectl-hami/kubectl-hami-agent, the NVML node agent), each with its BuildKit .dockerignore.
//
// It has no code. No Docker engine runs in this project's CI, so its test parses the Dockerfiles and checks
// them against go.mod (Go version), the Makefile (version stamping), the krew manifest (version) and deploy/
// (image names, tags, arguments and users of the containers that run them). See docs/install.md.
package build
