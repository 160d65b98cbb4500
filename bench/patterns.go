package bench

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
)

// IdentifierERE is the contract's identifier line as a POSIX extended
// regular expression.
const IdentifierERE = `^provisioning failed: stage=[a-z]+ code=[A-Z_]+ \(exit [0-9]+\)$`

// CataloguePrefixes reads the message prefixes of the classifier's catalogue
// (the legacyCatalogue table in internal/parse/legacy_catalogue.go) from its
// source, so that grep is always given the messages the classifier
// currently looks for without internal/parse having to export them.
func CataloguePrefixes(file string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != "legacyCatalogue" || len(vs.Values) != 1 {
				continue
			}
			table, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				return nil, fmt.Errorf("legacyCatalogue is not a table literal")
			}
			for _, e := range table.Elts {
				p, err := rulePrefix(e)
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no catalogue prefixes found in %s", file)
	}
	return out, nil
}

func rulePrefix(e ast.Expr) (string, error) {
	rule, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", fmt.Errorf("a catalogue entry is not a literal")
	}
	for _, f := range rule.Elts {
		kv, ok := f.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "prefix" {
			continue
		}
		lit, ok := kv.Value.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", fmt.Errorf("a catalogue prefix is not a string literal")
		}
		return strconv.Unquote(lit.Value)
	}
	return "", fmt.Errorf("a catalogue entry has no prefix")
}

// GrepPatterns is the pattern list given to `grep -E -i -f`: the identifier
// line and every catalogue prefix as a literal. grep looks for the prefixes
// anywhere in a line, without parsing the log format or removing colour
// escapes, so it does less work per line than the classifier and matches a
// superset of its lines.
func GrepPatterns(prefixes []string) []string {
	out := []string{IdentifierERE}
	for _, p := range prefixes {
		// RE2's escapes of metacharacters are valid ERE escapes too.
		out = append(out, regexp.QuoteMeta(p))
	}
	return out
}
