// Package flatpkg writes macOS flat packages (product archives, as
// productbuild writes them) on any operating system, byte for byte the
// same for the same input: every entry is root:wheel with one fixed time,
// in a fixed order, compressed with fixed settings.
//
// A product archive is a xar archive holding a Distribution (what
// Installer shows and checks: architectures, the minimum macOS) and one
// component package directory: PackageInfo (identifier, version, scripts),
// Bom (the payload's file list), Payload (a gzip'd cpio archive of the
// files, odc format) and Scripts (the same, of the scripts directory).
// A payload-free package, as pkgbuild --nopayload writes it, has neither
// Bom nor Payload and leaves no receipt.
package flatpkg

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"
)

// File is a file of the payload or of the scripts.
type File struct {
	Path string // relative, slash-separated: "usr/local/bin/ctrld"
	Mode fs.FileMode
	Data []byte
}

// Product is a product archive with one component package.
type Product struct {
	Title             string // shown by Installer
	Identifier        string // com.controld.ctrld
	Version           string
	MinMacOS          string // "12.0": Installer refuses older systems
	HostArchitectures string // "x86_64,arm64"
	// Payload is laid under /; nil makes a payload-free package.
	Payload []File
	// Scripts go to the scripts directory: postinstall, and the files it
	// reads beside it.
	Scripts []File
	// ModTime is every entry's time, in the archive, the Bom and both cpio
	// archives.
	ModTime time.Time
}

var (
	identifierRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*$`)
	versionRE    = regexp.MustCompile(`^[0-9A-Za-z.+-]+$`)
	macOSRE      = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`)
	archRE       = regexp.MustCompile(`^[a-z0-9_]+(,[a-z0-9_]+)*$`)
)

func (p Product) check() error {
	switch {
	case !identifierRE.MatchString(p.Identifier):
		return errors.New("the identifier may hold only letters, digits, dots and minus signs")
	case !versionRE.MatchString(p.Version):
		return errors.New("the version may hold only letters, digits, dots, plus and minus signs")
	case !macOSRE.MatchString(p.MinMacOS):
		return errors.New("the minimum macOS version must look like 12.0")
	case !archRE.MatchString(p.HostArchitectures):
		return errors.New("the host architectures must be a comma-separated list such as x86_64,arm64")
	case p.Title == "":
		return errors.New("the title is empty")
	case len(p.Scripts) == 0 && p.Payload == nil:
		return errors.New("a package with neither payload nor scripts does nothing")
	}
	for _, f := range p.Scripts {
		if strings.Contains(f.Path, "/") {
			return fmt.Errorf("the script %q must be at the top of the scripts directory", f.Path)
		}
	}
	return nil
}

// Bytes returns the product archive.
func (p Product) Bytes() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	mtime := p.ModTime.Unix()
	if mtime < 0 || mtime > 1<<32-1 {
		return nil, errors.New("the time must lie between 1970 and 2106")
	}
	component := p.Identifier + ".pkg"
	var parts []xarNode
	var numberOfFiles, installKBytes int
	if p.Payload != nil {
		entries, err := tree(p.Payload)
		if err != nil {
			return nil, err
		}
		payload, err := gzipped(cpioODC(entries, mtime))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			numberOfFiles++
			installKBytes += (len(e.data) + 1023) / 1024
		}
		parts = append(parts, xarFile("Bom", bom(entries, mtime)), xarFile("Payload", payload))
	}
	var scriptNames []string
	if len(p.Scripts) > 0 {
		entries, err := tree(p.Scripts)
		if err != nil {
			return nil, err
		}
		scripts, err := gzipped(cpioODC(entries, mtime))
		if err != nil {
			return nil, err
		}
		parts = append(parts, xarFile("Scripts", scripts))
		for _, f := range p.Scripts {
			scriptNames = append(scriptNames, f.Path)
		}
	}
	info, err := p.packageInfo(scriptNames, numberOfFiles, installKBytes)
	if err != nil {
		return nil, err
	}
	parts = append(parts, xarFile("PackageInfo", info))
	dist, err := p.distribution(component, installKBytes)
	if err != nil {
		return nil, err
	}
	return writeXar([]xarNode{xarFile("Distribution", dist), xarDir(component, parts...)}, p.ModTime)
}

type pkgInfo struct {
	XMLName              xml.Name    `xml:"pkg-info"`
	OverwritePermissions bool        `xml:"overwrite-permissions,attr"`
	Relocatable          bool        `xml:"relocatable,attr"`
	Identifier           string      `xml:"identifier,attr"`
	PostinstallAction    string      `xml:"postinstall-action,attr"`
	Version              string      `xml:"version,attr"`
	FormatVersion        int         `xml:"format-version,attr"`
	InstallLocation      string      `xml:"install-location,attr"`
	Auth                 string      `xml:"auth,attr"`
	Payload              *pkgPayload `xml:"payload,omitempty"`
	BundleVersion        struct{}    `xml:"bundle-version"`
	UpgradeBundle        struct{}    `xml:"upgrade-bundle"`
	UpdateBundle         struct{}    `xml:"update-bundle"`
	AtomicUpdateBundle   struct{}    `xml:"atomic-update-bundle"`
	StrictIdentifier     struct{}    `xml:"strict-identifier"`
	Relocate             struct{}    `xml:"relocate"`
	Scripts              *pkgScripts `xml:"scripts,omitempty"`
}

type pkgPayload struct {
	NumberOfFiles int `xml:"numberOfFiles,attr"`
	InstallKBytes int `xml:"installKBytes,attr"`
}

type pkgScript struct {
	File string `xml:"file,attr"`
}

type pkgScripts struct {
	Preinstall  *pkgScript `xml:"preinstall,omitempty"`
	Postinstall *pkgScript `xml:"postinstall,omitempty"`
}

func (p Product) packageInfo(scripts []string, files, kbytes int) ([]byte, error) {
	info := pkgInfo{
		OverwritePermissions: true, Identifier: p.Identifier, PostinstallAction: "none",
		Version: p.Version, FormatVersion: 2, InstallLocation: "/", Auth: "root",
	}
	if p.Payload != nil {
		info.Payload = &pkgPayload{NumberOfFiles: files, InstallKBytes: kbytes}
	}
	for _, s := range scripts {
		switch s {
		case "preinstall":
			if info.Scripts == nil {
				info.Scripts = &pkgScripts{}
			}
			info.Scripts.Preinstall = &pkgScript{File: "./preinstall"}
		case "postinstall":
			if info.Scripts == nil {
				info.Scripts = &pkgScripts{}
			}
			info.Scripts.Postinstall = &pkgScript{File: "./postinstall"}
		}
	}
	return marshal(info)
}

type distribution struct {
	XMLName        xml.Name `xml:"installer-gui-script"`
	MinSpecVersion int      `xml:"minSpecVersion,attr"`
	Title          string   `xml:"title"`
	Options        struct {
		Customize         string `xml:"customize,attr"`
		RequireScripts    bool   `xml:"require-scripts,attr"`
		HostArchitectures string `xml:"hostArchitectures,attr"`
	} `xml:"options"`
	VolumeCheck struct {
		OSVersion struct {
			Min string `xml:"min,attr"`
		} `xml:"allowed-os-versions>os-version"`
	} `xml:"volume-check"`
	Domains struct {
		Anywhere        bool `xml:"enable_anywhere,attr"`
		CurrentUserHome bool `xml:"enable_currentUserHome,attr"`
		LocalSystem     bool `xml:"enable_localSystem,attr"`
	} `xml:"domains"`
	Outline struct {
		Line struct {
			Choice string `xml:"choice,attr"`
			Line   struct {
				Choice string `xml:"choice,attr"`
			} `xml:"line"`
		} `xml:"line"`
	} `xml:"choices-outline"`
	Choices []distChoice `xml:"choice"`
	PkgRef  distPkgRef   `xml:"pkg-ref"`
}

type distChoice struct {
	ID      string      `xml:"id,attr"`
	Visible *bool       `xml:"visible,attr,omitempty"`
	PkgRef  *distPkgRef `xml:"pkg-ref,omitempty"`
}

type distPkgRef struct {
	ID            string `xml:"id,attr"`
	Version       string `xml:"version,attr,omitempty"`
	OnConclusion  string `xml:"onConclusion,attr,omitempty"`
	InstallKBytes *int   `xml:"installKBytes,attr,omitempty"`
	Href          string `xml:",chardata"`
}

func (p Product) distribution(component string, kbytes int) ([]byte, error) {
	var d distribution
	d.MinSpecVersion = 2
	d.Title = p.Title
	d.Options.Customize = "never"
	d.Options.HostArchitectures = p.HostArchitectures
	d.VolumeCheck.OSVersion.Min = p.MinMacOS
	d.Domains.LocalSystem = true
	d.Outline.Line.Choice = "default"
	d.Outline.Line.Line.Choice = p.Identifier
	hidden := false
	d.Choices = []distChoice{
		{ID: "default"},
		{ID: p.Identifier, Visible: &hidden, PkgRef: &distPkgRef{ID: p.Identifier}},
	}
	d.PkgRef = distPkgRef{ID: p.Identifier, Version: p.Version, OnConclusion: "none", InstallKBytes: &kbytes, Href: "#" + component}
	return marshal(d)
}

func marshal(v any) ([]byte, error) {
	b, err := xml.MarshalIndent(v, "", "    ")
	if err != nil {
		return nil, err
	}
	out := append([]byte(`<?xml version="1.0" encoding="utf-8"?>`+"\n"), b...)
	return append(out, '\n'), nil
}
