//! The crate's layout, checked: no cycle among the top-level modules of `src/` (each
//! layer imports only those below it, `docs/architecture.md`, "Layers"), and no source
//! file over 450 lines.
//!
//! An edge `a -> b` is any path into module `b` written in module `a`'s files:
//! `crate::b::...`, `crate::{b, ...}`, `super::` chains that climb to the crate root, and
//! the names `lib.rs` re-exports from `b` (`crate::ThreadPool` is an edge to
//! `thread_pool`). Comments are skipped, and so is unit-test code (`test.rs` files and
//! `#[cfg(test)]` modules), which may build a pool to test a lower layer.
//! `cargo test --test module_graph -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest source file the layout allows.
const MAX_LINES: usize = 450;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, with its module path relative to `src/`.
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

/// `src/a/b/c.rs` -> ["a", "b", "c"]; `src/a/mod.rs` -> ["a"]; `src/a.rs` -> ["a"].
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).expect("under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
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

/// The identifier at the start of `s` (after whitespace).
fn leading_ident(s: &str) -> &str {
    let s = s.trim_start();
    let end = s.find(|c: char| !is_ident_char(c)).unwrap_or(s.len());
    &s[..end]
}

/// The first identifier of each top-level item of the `{ ... }` group `s` starts with.
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                heads.push(leading_ident(&s[item_start..i]).to_string());
                item_start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads.retain(|h| !h.is_empty());
    heads
}

/// The names directly after each occurrence of `prefix` (a path that ends at the crate
/// root), expanding `{ ... }` groups.
fn names_after(text: &str, prefix: &str, out: &mut Vec<String>) {
    let mut from = 0;
    while let Some(i) = text[from..].find(prefix) {
        let start = from + i;
        from = start + prefix.len();
        // Not the tail of a longer path or identifier (`foo_crate::`, `a::super::`).
        if text[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        let rest = &text[from..];
        if rest.starts_with('{') {
            out.extend(group_heads(rest));
        } else {
            out.push(leading_ident(rest).to_string());
        }
    }
}

/// Names `lib.rs` re-exports, mapped to the module they come from.
fn root_reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(at) = stmt.find("use crate::") else {
            continue;
        };
        let path = &stmt[at + "use crate::".len()..];
        let module = leading_ident(path);
        if !modules.contains(module) {
            continue;
        }
        let last = path.rsplit("::").next().unwrap_or("").trim();
        let items: Vec<&str> = if last.starts_with('{') {
            last.trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .collect()
        } else {
            vec![last]
        };
        for item in items {
            let name = item.split_whitespace().last().unwrap_or("");
            if !name.is_empty() {
                names.insert(name.to_string(), module.to_string());
            }
        }
    }
    names
}

/// The top-level module graph: module -> the modules its files name.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_path(f))
        .filter(|p| !p.is_empty() && p[0] != "lib")
        .map(|p| p[0].clone())
        .collect();
    let lib = strip_comments(&fs::read_to_string(src_dir().join("lib.rs")).expect("lib.rs"));
    let reexports = root_reexports(&lib, &modules);
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for file in &files {
        let path = module_path(file);
        if path.is_empty() || path[0] == "lib" || path.last().is_some_and(|p| p == "test") {
            continue;
        }
        let text = strip_test_modules(&strip_comments(
            &fs::read_to_string(file).expect("a source file"),
        ));
        let mut names = Vec::new();
        names_after(&text, "crate::", &mut names);
        // `super::` repeated as often as the file is deep reaches the crate root.
        names_after(&text, &"super::".repeat(path.len()), &mut names);
        for name in names {
            let target = if modules.contains(&name) {
                Some(&name)
            } else {
                reexports.get(&name)
            };
            if let Some(target) = target {
                if *target != path[0] {
                    graph
                        .get_mut(&path[0])
                        .expect("a module")
                        .insert(target.clone());
                }
            }
        }
    }
    graph
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

#[test]
fn the_top_level_modules_form_no_cycle() {
    let graph = module_graph();
    for (module, deps) in &graph {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{module} -> {}", deps.join(", "));
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the top-level modules of src/ form a cycle: {} (docs/architecture.md, \"Layers\")",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_checker_sees_paths_groups_reexports_and_cycles() {
    let text = strip_comments(
        "use crate::{a::X, b};\n// crate::c\nlet y = crate::d::f(); let s = super::super::e;\n\
         my_crate::g; /* crate::h */",
    );
    let mut names = Vec::new();
    names_after(&text, "crate::", &mut names);
    names_after(&text, "super::super::", &mut names);
    assert_eq!(names, ["a", "b", "d", "e"]);
    let with_tests = "use crate::a;\n#[cfg(test)]\nmod test;\n#[cfg(all(test, not(loom)))]\n\
                      mod t { use crate::b; fn f() { {} } }\nuse crate::c;";
    let mut names = Vec::new();
    names_after(&strip_test_modules(with_tests), "crate::", &mut names);
    assert_eq!(names, ["a", "c"]);
    let modules: BTreeSet<String> = ["m".to_string()].into();
    let lib = "pub use crate::m::{One, two as Two};\npub use crate::m::Three;";
    let reexports = root_reexports(lib, &modules);
    assert_eq!(
        reexports.keys().collect::<Vec<_>>(),
        ["One", "Three", "Two"]
    );
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
