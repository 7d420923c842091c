// lua-health runs an Argo CD resource health check (a health.lua) against one object and
// prints the health it returns as JSON: {"status": "...", "message": "..."}. With
// -discovery it runs a resource actions' discovery.lua instead and prints the actions it
// offers, as Argo CD reads them (sorted by name); with -action it runs an action.lua, given
// its parameters with -param name=value, and prints the object it returns.
//
// It reproduces what Argo CD's application controller gives a health script, with the
// interpreter Argo CD embeds (gopher-lua):
//   - the object is the global `obj`, a Lua table built from the object's JSON (arrays are
//     1-based sequences, JSON null is nil, numbers are Lua numbers);
//   - by default the sandbox of a script configured in argocd-cm: only the base, package
//     and table libraries, and `require("os")` giving os.time (no `os` global, no string
//     or math library). -open-libs gives instead what Argo CD gives its built-in scripts
//     and argocd-cm scripts with useOpenLibs: every standard library as well;
//   - the global `actionParams`, a table of the action's parameters (empty but for actions);
//   - a one-second limit on the run;
//   - the script's result must be a table whose `status` is one of Healthy, Progressing,
//     Degraded, Suspended, Missing, Unknown; any other status becomes Unknown with the
//     message Argo CD uses ("Lua returned an invalid health status").
//
// os.date is not offered in the sandbox: Argo CD's own copy of it formats a "!" (UTC)
// format given an explicit time in local time, unlike gopher-lua's, so a script that
// needs it would behave differently here and there. -now pins os.time() to a given
// instant, so that checks which compare timestamps with the clock can be tested exactly.
//
// Exit status: 0 with the health printed; 1 when the script fails or returns something
// Argo CD would refuse (the error on stderr); 2 for a usage or input error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"
)

// runTimeout is how long Argo CD lets a health script run.
const runTimeout = time.Second

var healthStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

// health is Argo CD's HealthStatus as a script reports it.
type health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	flags := flag.NewFlagSet("lua-health", flag.ContinueOnError)
	openLibs := flags.Bool("open-libs", false, "give the script every standard library (Argo CD built-in scripts, useOpenLibs)")
	nowText := flags.String("now", "", "RFC 3339 instant os.time() returns (default: the clock)")
	discovery := flags.Bool("discovery", false, "the script is an actions discovery.lua: print the actions it offers")
	action := flags.Bool("action", false, "the script is an action.lua: print the object it returns")
	params := map[string]string{}
	flags.Func("param", "an action parameter, name=value (repeatable)", func(text string) error {
		name, value, ok := strings.Cut(text, "=")
		if !ok || name == "" {
			return errors.New("want name=value")
		}
		params[name] = value
		return nil
	})
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: lua-health [-open-libs] [-now RFC3339] [-discovery | -action [-param name=value]...] script.lua object.yaml|object.json")
		flags.PrintDefaults()
	}
	if err := flags.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if flags.NArg() != 2 {
		flags.Usage()
		os.Exit(2)
	}
	clock := time.Now
	if *nowText != "" {
		now, err := time.Parse(time.RFC3339, *nowText)
		if err != nil {
			fail(2, fmt.Errorf("-now: %w", err))
		}
		clock = func() time.Time { return now }
	}
	script, err := os.ReadFile(flags.Arg(0))
	if err != nil {
		fail(2, err)
	}
	object, err := readObject(flags.Arg(1))
	if err != nil {
		fail(2, err)
	}
	var result any
	switch {
	case *discovery:
		result, err = runDiscovery(string(script), object, *openLibs, clock)
	case *action:
		result, err = runAction(string(script), object, params, *openLibs, clock)
	default:
		result, err = run(string(script), object, *openLibs, clock)
	}
	if err != nil {
		fail(1, err)
	}
	out, err := json.Marshal(result)
	if err != nil {
		fail(1, err)
	}
	fmt.Println(string(out))
}

func fail(code int, err error) {
	fmt.Fprintf(os.Stderr, "lua-health: %v\n", err)
	os.Exit(code)
}

// readObject reads a Kubernetes object written as YAML or JSON.
func readObject(path string) (map[string]any, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	asJSON, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var object map[string]any
	if err := json.Unmarshal(asJSON, &object); err != nil || object == nil {
		return nil, fmt.Errorf("%s: not an object (a YAML or JSON mapping)", path)
	}
	return object, nil
}

// run executes a health script with obj set to object and returns the health it reports.
func run(script string, object map[string]any, openLibs bool, clock func() time.Time) (health, error) {
	var result health
	err := execute(script, object, nil, openLibs, clock, func(value lua.LValue) (err error) {
		result, err = readHealth(value)
		return err
	})
	return result, err
}

// action is one entry of what a discovery.lua offers, as Argo CD's ResourceAction.
type action struct {
	Name        string        `json:"name"`
	Disabled    bool          `json:"disabled"`
	IconClass   string        `json:"iconClass"`
	DisplayName string        `json:"displayName"`
	Params      []actionParam `json:"params,omitempty"`
}

type actionParam struct {
	Name string `json:"name"`
}

// runDiscovery executes a discovery.lua and returns the actions it offers, sorted by name.
func runDiscovery(script string, object map[string]any, openLibs bool, clock func() time.Time) ([]action, error) {
	var actions []action
	err := execute(script, object, nil, openLibs, clock, func(value lua.LValue) error {
		table, ok := value.(*lua.LTable)
		if !ok {
			return fmt.Errorf("expect table output from Lua script, not %s", value.Type())
		}
		// Argo CD reads the table through JSON: each entry's fields by their JSON names.
		encoded, err := json.Marshal(fromLua(table))
		if err != nil {
			return err
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(encoded, &entries); err != nil {
			if string(encoded) == "[]" {
				return nil // an empty table: no actions
			}
			return fmt.Errorf("the actions are not a table by name: %w", err)
		}
		for name, raw := range entries {
			entry := action{}
			if string(raw) != "[]" {
				if err := json.Unmarshal(raw, &entry); err != nil {
					return fmt.Errorf("action %q: %w", name, err)
				}
			}
			entry.Name = name
			actions = append(actions, entry)
		}
		return nil
	})
	sort.Slice(actions, func(i, j int) bool { return actions[i].Name < actions[j].Name })
	return actions, err
}

// runAction executes an action.lua with actionParams set to params and returns the object
// it returns, with empty tables that stood for objects in the input turned back into
// objects (Argo CD's cleanReturnedObj).
func runAction(script string, object map[string]any, params map[string]string, openLibs bool, clock func() time.Time) (map[string]any, error) {
	var result map[string]any
	err := execute(script, object, params, openLibs, clock, func(value lua.LValue) error {
		table, ok := value.(*lua.LTable)
		if !ok {
			return fmt.Errorf("expect table output from Lua script, not %s", value.Type())
		}
		returned, ok := fromLua(table).(map[string]any)
		if !ok {
			return errors.New("the action returned a list: lua-health reads only actions that return the object")
		}
		result = restoreEmptyObjects(returned, object).(map[string]any)
		return nil
	})
	return result, err
}

// execute runs script with obj set to object and actionParams to params, in the sandbox
// Argo CD gives it, and hands the script's result to read.
func execute(script string, object map[string]any, params map[string]string, openLibs bool, clock func() time.Time, read func(lua.LValue) error) error {
	L := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return fmt.Errorf("opening the %q library: %w", lib.name, err)
		}
	}
	timeFn := L.NewFunction(osTime(clock))
	// Reopening the package library above emptied package.loaded, so require("os") always
	// loads this module, as in Argo CD.
	L.PreloadModule(lua.OsLibName, func(L *lua.LState) int {
		mod := L.NewTable()
		mod.RawSetString("time", timeFn)
		L.Push(mod)
		return 1
	})
	if openLibs {
		if global, ok := L.GetGlobal(lua.OsLibName).(*lua.LTable); ok {
			global.RawSetString("time", timeFn)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	L.SetContext(ctx)
	actionParams := L.CreateTable(0, len(params))
	for name, value := range params {
		actionParams.RawSetString(name, lua.LString(value))
	}
	L.SetGlobal("actionParams", actionParams)
	L.SetGlobal("obj", toLua(L, object))
	if err := L.DoString(script); err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorRun {
			// Argo CD drops the stack trace from the error it shows.
			apiErr.StackTrace = ""
		}
		return err
	}
	return read(L.Get(-1))
}

// osTime is os.time: the clock's Unix time, or the Unix time of a date table read in
// local time (hour 12 when absent), as gopher-lua and Argo CD compute it.
func osTime(clock func() time.Time) lua.LGFunction {
	return func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.Push(lua.LNumber(clock().Unix()))
			return 1
		}
		date := L.CheckTable(1)
		field := func(key string, fallback int) int {
			if n, ok := date.RawGetString(key).(lua.LNumber); ok {
				return int(n)
			}
			return fallback
		}
		t := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
			field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
		L.Push(lua.LNumber(t.Unix()))
		return 1
	}
}

// toLua converts decoded JSON into Lua values the way Argo CD hands objects to scripts.
func toLua(L *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []any:
		list := L.CreateTable(len(v), 0)
		for _, item := range v {
			list.Append(toLua(L, item))
		}
		return list
	case map[string]any:
		table := L.CreateTable(0, len(v))
		for key, item := range v {
			table.RawSetString(key, toLua(L, item))
		}
		return table
	default:
		return lua.LNil
	}
}

// fromLua converts a Lua value into JSON-like Go values the way Argo CD's JSON encoding of
// a script's result does: a table with keys 1..n is a list, an empty table an empty list,
// any other table an object.
func fromLua(value lua.LValue) any {
	switch v := value.(type) {
	case lua.LBool:
		return bool(v)
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		return string(v)
	case *lua.LTable:
		if n := v.MaxN(); n > 0 || v.Len() == 0 && isEmpty(v) {
			list := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				list = append(list, fromLua(v.RawGetInt(i)))
			}
			return list
		}
		object := map[string]any{}
		v.ForEach(func(key, item lua.LValue) {
			object[key.String()] = fromLua(item)
		})
		return object
	default:
		return nil
	}
}

func isEmpty(table *lua.LTable) bool {
	key, _ := table.Next(lua.LNil)
	return key == lua.LNil
}

// restoreEmptyObjects turns an empty list in returned back into an empty object where the
// original held an object (Lua cannot tell the two apart), recursively.
func restoreEmptyObjects(returned, original any) any {
	switch r := returned.(type) {
	case map[string]any:
		if o, ok := original.(map[string]any); ok {
			for key, value := range r {
				if old, found := o[key]; found {
					r[key] = restoreEmptyObjects(value, old)
				}
			}
		}
	case []any:
		switch o := original.(type) {
		case map[string]any:
			if len(r) == 0 {
				return map[string]any{}
			}
		case []any:
			for i := range r {
				if i < len(o) {
					r[i] = restoreEmptyObjects(r[i], o[i])
				}
			}
		}
	}
	return returned
}

// readHealth checks a script's result as Argo CD does.
func readHealth(result lua.LValue) (health, error) {
	table, ok := result.(*lua.LTable)
	if !ok {
		return health{}, fmt.Errorf("expect table output from Lua script, not %s", result.Type())
	}
	status, ok := table.RawGetString("status").(lua.LString)
	if !ok {
		return health{}, errors.New("the returned table has no string field status")
	}
	var message string
	switch m := table.RawGetString("message").(type) {
	case lua.LString:
		message = string(m)
	case *lua.LNilType:
	default:
		return health{}, fmt.Errorf("the returned message is a %s, not a string", m.Type())
	}
	if !healthStatuses[string(status)] {
		return health{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return health{Status: string(status), Message: message}, nil
}
