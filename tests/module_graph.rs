//! The crate's layout, checked: no cycle among the modules of any folder of `src/` (the
//! top level: each layer imports only those below it, `docs/architecture.md`, "Layers";
//! and the same inside every folder), `lib.rs` holds only declarations and re-exports, and
//! no source file is over 450 lines.
//!
//! An edge `a -> b` in folder `f` is a path written in a file of `f`'s child module `a`
//! that reaches into its sibling `b`: `crate::f::b::...`, `crate::{...}` groups, `super::`
//! and `self::` chains, and names re-exported by `lib.rs` or a `mod.rs` (a name
//! `worker/mod.rs` re-exports from `worker/entry.rs` is an edge to `entry`). A name the
//! folder's own `mod.rs` defines is the folder itself, not a sibling. Comments are
//! skipped, and so is unit-test code (`test.rs` and `tests.rs` files and `#[cfg(test)]`
//! modules), which may build a pool to test a lower layer.
//! `cargo test --test module_graph -- --nocapture` prints every folder's graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest source file the layout allows.
const MAX_LINES: usize = 450;

/// A module path below the crate root: `["pool", "worker", "entry"]`.
type ModPath = Vec<String>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b/c.rs` -> ["a", "b", "c"]; `src/a/mod.rs` -> ["a"]; `src/lib.rs` -> [].
fn module_path(file: &Path) -> ModPath {
    let rel = file.strip_prefix(src_dir()).expect("under src/");
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Unit-test files: `test.rs`, `tests.rs`.
fn is_test_file(file: &Path) -> bool {
    file.file_stem()
        .is_some_and(|s| s == "test" || s == "tests")
}

/// The text without `//` comments (doc comments included) and `/* */` comments. String
/// literals are kept: none of the crate's holds a module path.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The text without its `#[cfg(test)]` / `#[cfg(all(test, ...))]` inline modules.
fn strip_test_modules(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(at) = ["#[cfg(test)]", "#[cfg(all(test"]
        .iter()
        .filter_map(|attr| out.find(attr))
        .min()
    {
        let Some(open) = out[at..].find(['{', ';']).map(|i| at + i) else {
            break;
        };
        let mut end = open + 1;
        if out[open..].starts_with('{') {
            let mut depth = 0;
            for (i, c) in out[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = open + i + 1;
                    break;
                }
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths written at the start of `s`: `a::b::C` gives one, `a::{b, c::{D, E}}` gives
/// `a::b`, `a::c::D` and `a::c::E`. Each path is paired with the name it binds when it is
/// imported (the last segment, or its `as` alias).
fn parse_tree(s: &str, prefix: &ModPath, out: &mut Vec<(ModPath, String)>) {
    let mut path = prefix.clone();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 1 => {
                        parse_tree(&group[item_start..i], &path, out);
                        item_start = i + 1;
                        if c == '}' {
                            return;
                        }
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            return;
        }
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        path.push(rest[..end].to_string());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if path.len() == prefix.len() {
        return;
    }
    let rest = rest.trim_start();
    let name = match rest.strip_prefix("as ") {
        Some(alias) => {
            let alias = alias.trim_start();
            let end = alias
                .find(|c: char| !is_ident_char(c))
                .unwrap_or(alias.len());
            alias[..end].to_string()
        }
        None => path.last().expect("not empty").clone(),
    };
    out.push((path, name));
}

/// The absolute paths that start at each `crate::`, `super::` or `self::` in `text`, a
/// file of module `here`, with the names they bind.
fn absolute_paths(text: &str, here: &ModPath) -> Vec<(ModPath, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(['c', 's']) {
        let start = from + i;
        from = start + 1;
        // Not the tail of a longer path or identifier (`my_crate::`, `a::super::`).
        if text[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        let rest = &text[start..];
        let (base, after) = if let Some(after) = rest.strip_prefix("crate::") {
            (Vec::new(), after)
        } else if let Some(after) = rest.strip_prefix("self::") {
            (here.clone(), after)
        } else if rest.starts_with("super::") {
            let mut base = here.clone();
            let mut after = rest;
            while let Some(next) = after.strip_prefix("super::") {
                base.pop();
                after = next;
            }
            (base, after)
        } else {
            continue;
        };
        parse_tree(after, &base, &mut out);
        from = text.len() - after.len();
    }
    out
}

/// The `pub` / `pub(crate)` / `pub(super)` `use` statements of a file of module `here`:
/// the absolute path each binds in `here`, mapped to the path it names. Bare paths
/// (`use entry::X`) start at a child module of `here`.
fn reexports(
    text: &str,
    here: &ModPath,
    modules: &BTreeSet<ModPath>,
) -> BTreeMap<ModPath, ModPath> {
    let mut map = BTreeMap::new();
    for stmt in text.split(';') {
        let Some(at) = stmt.find("use ") else {
            continue;
        };
        // `pub use`, `pub(crate) use`, `pub(super) use`: the word before `use`.
        if !stmt[..at]
            .split_whitespace()
            .last()
            .is_some_and(|word| word.starts_with("pub"))
        {
            continue;
        }
        let tree = &stmt[at + "use ".len()..];
        let mut paths = absolute_paths(tree, here);
        if paths.is_empty() {
            let mut child = here.clone();
            child.push(
                tree.trim_start()
                    .split("::")
                    .next()
                    .unwrap_or("")
                    .to_string(),
            );
            if modules.contains(&child) {
                parse_tree(tree, here, &mut paths);
            }
        }
        for (path, name) in paths {
            let mut bound = here.clone();
            bound.push(name);
            if bound != path {
                map.insert(bound, path);
            }
        }
    }
    map
}

/// Every folder's graph: folder -> (child module -> the siblings its files name).
fn module_graphs() -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    files.retain(|f| !is_test_file(f));
    let texts: Vec<(ModPath, String)> = files
        .iter()
        .map(|f| {
            let text = fs::read_to_string(f).expect("a source file");
            (module_path(f), strip_test_modules(&strip_comments(&text)))
        })
        .collect();
    let mut modules: BTreeSet<ModPath> = BTreeSet::new();
    for (path, _) in &texts {
        for len in 0..=path.len() {
            modules.insert(path[..len].to_vec());
        }
    }
    let mut renames = BTreeMap::new();
    for (here, text) in &texts {
        renames.extend(reexports(text, here, &modules));
    }
    // Follows re-exports to where a name is defined. A module wins over a re-exported
    // function of the same name (`crate::metrics::...` is the module, not the function
    // `lib.rs` re-exports from `thread_pool`).
    let resolve = |mut path: ModPath| -> ModPath {
        for _ in 0..8 {
            let found = (1..=path.len()).rev().find_map(|len| {
                let prefix = &path[..len];
                if modules.contains(prefix) {
                    return None;
                }
                renames.get(prefix).map(|to| (len, to.clone()))
            });
            match found {
                Some((len, to)) => {
                    let mut next = to;
                    next.extend_from_slice(&path[len..]);
                    path = next;
                }
                None => break,
            }
        }
        path
    };
    let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for folder in &modules {
        let children: BTreeMap<String, BTreeSet<String>> = modules
            .iter()
            .filter(|m| m.len() == folder.len() + 1 && m.starts_with(folder))
            .map(|m| (m[folder.len()].clone(), BTreeSet::new()))
            .collect();
        if !children.is_empty() {
            graphs.insert(folder.clone(), children);
        }
    }
    for (here, text) in &texts {
        for (path, _) in absolute_paths(text, here) {
            let target = resolve(path);
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == here.len() || common == target.len() {
                continue;
            }
            let folder = here[..common].to_vec();
            let (from, to) = (&here[common], &target[common]);
            let mut sibling = folder.clone();
            sibling.push(to.clone());
            if !modules.contains(&sibling) {
                continue; // an item of the folder's own `mod.rs`
            }
            graphs
                .get_mut(&folder)
                .and_then(|g| g.get_mut(from))
                .expect("a child of the folder")
                .insert(to.clone());
        }
    }
    graphs
}

/// A cycle of `graph`, if it has one, as the list of modules along it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::OnPath);
        path.push(node.to_string());
        for next in &graph[node] {
            match marks[next] {
                Mark::OnPath => {
                    let start = path.iter().position(|m| m == next).expect("on the path");
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, graph, marks, path) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks: BTreeMap<String, Mark> = graph.keys().map(|m| (m.clone(), Mark::New)).collect();
    for node in graph.keys() {
        if marks[node] == Mark::New {
            if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn folder_name(folder: &ModPath) -> String {
    if folder.is_empty() {
        "src/".to_string()
    } else {
        format!("src/{}/", folder.join("/"))
    }
}

#[test]
fn no_folder_has_a_cycle() {
    let graphs = module_graphs();
    let mut cycles = Vec::new();
    for (folder, graph) in &graphs {
        println!("{}", folder_name(folder));
        for (module, deps) in graph {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            println!("  {module} -> {}", deps.join(", "));
        }
        if let Some(cycle) = find_cycle(graph) {
            cycles.push(format!("{}: {}", folder_name(folder), cycle.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "modules that import each other (docs/architecture.md, \"Layers\"): {cycles:?}"
    );
}

#[test]
fn lib_rs_only_declares_and_reexports() {
    let lib = strip_comments(&fs::read_to_string(src_dir().join("lib.rs")).expect("lib.rs"));
    let mut depth = 0;
    let mut stray = Vec::new();
    for line in lib.lines() {
        let line = line.trim();
        let top = depth == 0;
        depth += line.matches(['{', '(', '[']).count();
        depth -= line.matches(['}', ')', ']']).count();
        if !top || line.is_empty() || line.starts_with("#") {
            continue;
        }
        let allowed = [
            "mod ",
            "pub use ",
            "compile_error!",
            "struct ReadmeDoctests;",
        ];
        if !allowed.iter().any(|a| line.starts_with(a)) {
            stray.push(line.to_string());
        }
    }
    assert!(
        stray.is_empty(),
        "lib.rs holds more than module declarations and re-exports: {stray:?}"
    );
}

#[test]
fn the_checker_sees_paths_groups_reexports_and_cycles() {
    let here: ModPath = vec!["p".into(), "q".into()];
    let text = strip_comments(
        "use crate::{a::X, b};\n// crate::c\nlet y = crate::d::f(); let s = super::e::G;\n\
         my_crate::g; /* crate::h */ use self::i::{J as K, l::{M}};",
    );
    let paths: Vec<String> = absolute_paths(&text, &here)
        .into_iter()
        .map(|(p, name)| format!("{}={name}", p.join("::")))
        .collect();
    assert_eq!(
        paths,
        [
            "a::X=X",
            "b=b",
            "d::f=f",
            "p::e::G=G",
            "p::q::i::J=K",
            "p::q::i::l::M=M"
        ]
    );
    let with_tests = "use crate::a;\n#[cfg(test)]\nmod test;\n#[cfg(all(test, not(loom)))]\n\
                      mod t { use crate::b; fn f() { {} } }\nuse crate::c;";
    let names: Vec<ModPath> = absolute_paths(&strip_test_modules(with_tests), &Vec::new())
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(names, [vec!["a".to_string()], vec!["c".to_string()]]);
    let modules: BTreeSet<ModPath> = [vec!["m".into()], vec!["m".into(), "e".into()]].into();
    let map = reexports(
        "pub(crate) use e::{One, two as Two};\nuse e::Private;",
        &vec!["m".into()],
        &modules,
    );
    let bound: Vec<String> = map.keys().map(|k| k.join("::")).collect();
    assert_eq!(bound, ["m::One", "m::Two"]);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["a".to_string()].into()),
    ]
    .into();
    assert_eq!(find_cycle(&graph).expect("a cycle"), ["a", "b", "c", "a"]);
}

#[test]
fn no_source_file_is_over_450_lines() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(f)
                .expect("a source file")
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}
