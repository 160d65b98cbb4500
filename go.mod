module github.com/Control-D-Inc/ctrld-install

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/pflag v1.0.10
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
