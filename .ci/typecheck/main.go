// Command typecheck type-checks packages, their test files included, for
// the system and architecture that GOOS and GOARCH name, reading every
// package they import from source: the standard library is not compiled
// for the target, as `go vet` compiles it before it checks anything.
//
//	GOOS=netbsd typecheck github.com/evloop/evloop/internal/poll ...
//
// It prints each type error and exits with status 1 if there was one.
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: GOOS=os GOARCH=arch typecheck package...")
		os.Exit(2)
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctxt := &build.Default // GOOS, GOARCH and CGO_ENABLED from the environment
	c := &checker{
		ctxt: ctxt,
		fset: token.NewFileSet(),
		wd:   wd,
		// The "source" importer reads build.Default, as ctxt is.
		sizes: types.SizesFor("gc", ctxt.GOARCH),
	}
	c.src = importer.ForCompiler(c.fset, "source", nil).(types.ImporterFrom)
	failed := false
	for _, path := range os.Args[1:] {
		if !c.check(path) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

type checker struct {
	ctxt  *build.Context
	fset  *token.FileSet
	wd    string
	sizes types.Sizes
	src   types.ImporterFrom
}

// check type-checks the package at path with its in-package test files,
// then its external test package against that, and reports whether
// neither had an error.
func (c *checker) check(path string) bool {
	bp, err := c.ctxt.Import(path, c.wd, 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); ok {
			return true // nothing for this system
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return false
	}
	pkg, ok := c.checkFiles(path, bp.Dir, append(bp.GoFiles, bp.TestGoFiles...), nil)
	if len(bp.XTestGoFiles) > 0 && pkg != nil {
		_, xok := c.checkFiles(path+"_test", bp.Dir, bp.XTestGoFiles, pkg)
		ok = ok && xok
	}
	return ok
}

// checkFiles type-checks the named files of dir as the package path. An
// import of self's path gets self: an external test package sees what
// the package's own test files add.
func (c *checker) checkFiles(path, dir string, names []string, self *types.Package) (*types.Package, bool) {
	var files []*ast.File
	ok := true
	for _, name := range names {
		f, err := parser.ParseFile(c.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			ok = false
			continue
		}
		files = append(files, f)
	}
	if !ok {
		return nil, false
	}
	conf := types.Config{
		Importer: importerFunc(func(p, from string, mode types.ImportMode) (*types.Package, error) {
			if self != nil && p == self.Path() {
				return self, nil
			}
			return c.src.ImportFrom(p, from, mode)
		}),
		Sizes: c.sizes,
		Error: func(err error) {
			fmt.Fprintln(os.Stderr, err)
			ok = false
		},
	}
	pkg, _ := conf.Check(path, c.fset, files, nil)
	return pkg, ok
}

type importerFunc func(path, from string, mode types.ImportMode) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path, "", 0) }

func (f importerFunc) ImportFrom(path, from string, mode types.ImportMode) (*types.Package, error) {
	return f(path, from, mode)
}
