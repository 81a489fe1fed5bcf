//! History's "Export selected…" and "Import…" in the window (egui_kittest): two selected
//! runs go to a bundle, the bundle and a fio JSON file come into another database, and a
//! second import of the bundle adds nothing; each outcome is on the status line.

use crate::gui_common;

use crate::gui_common::wait_for;
use std::path::Path;

use egui::{Modifiers, Role};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsynclab::fio::import::read_fio_output;
use fsynclab::lab::import::store_imported;
use fsynclab::store::Store;
use fsynclab_gui::{LabApp, Tab};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/fio")
        .join(name)
}

/// The window on `db`, opened on the History tab.
fn harness(db: &Path) -> Harness<'static, LabApp> {
    gui_common::harness_on(db, Tab::History)
}

/// Types `path` in the dialog's File box (replacing what is there) and clicks `action`;
/// waits for the status line to change and returns it.
fn run_dialog(h: &mut Harness<'static, LabApp>, path: &Path, action: &str) -> (String, bool) {
    let before = h.state().status.message.clone();
    let field = h.get_by_label("File");
    field.focus();
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("File")
        .type_text(&path.display().to_string());
    h.run_steps(2);
    h.get_by_label(action).click();
    wait_for(h, action, |a| a.status.message != before);
    let s = &h.state().status;
    (s.message.clone(), s.is_error)
}

#[test]
fn export_selected_then_import_in_another_lab() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sqlite");
    {
        let store = Store::open(&a).unwrap();
        for (name, label) in [("A-ext4.out", "ext4"), ("A-btrfs.out", "btrfs")] {
            let out = read_fio_output(&fixture(name)).unwrap();
            store_imported(&store, &out.runs, Some(label), None).unwrap();
        }
    }
    let bundle = dir.path().join("two.fsynclab");
    let mut h = harness(&a);
    wait_for(&mut h, "two rows", |app| app.cache.runs.len() == 2);
    let cell = |h: &Harness<'static, LabApp>, text: &str| {
        h.get_all_by_role_and_label(Role::Label, text)
            .min_by(|x, y| x.rect().left().total_cmp(&y.rect().left()))
            .unwrap()
            .click_modifiers(Modifiers::CTRL);
    };
    cell(&h, "ext4");
    h.run_steps(2);
    cell(&h, "btrfs");
    h.run_steps(2);
    assert!(h.query_by_label("2 selected").is_some());
    h.get_by_label("Export selected…").click();
    h.run_steps(2);
    assert!(h.query_by_label("Export 2 selected run(s)").is_some());
    let (message, error) = run_dialog(&mut h, &bundle, "Export");
    assert!(!error, "{message}");
    assert!(message.starts_with("exported 2 run(s)"), "{message}");
    assert!(bundle.is_file());
    // Exporting again over it without "Replace" is refused, naming the fix.
    let (message, error) = run_dialog(&mut h, &bundle, "Export");
    assert!(error && message.contains("already exists"), "{message}");

    let b = dir.path().join("b.sqlite");
    let mut h = harness(&b);
    h.run_steps(3);
    h.get_by_label("Import…").click();
    h.run_steps(2);
    assert!(h.query_by_label("Import runs").is_some());
    let (message, error) = run_dialog(&mut h, &bundle, "Import");
    assert!(!error, "{message}");
    assert!(message.ends_with("2 new, 0 already present"), "{message}");
    wait_for(&mut h, "the imported rows", |app| app.cache.runs.len() == 2);
    let (message, _) = run_dialog(&mut h, &fixture("seed000-json.json"), "Import");
    assert!(message.ends_with("1 fio run(s) imported"), "{message}");
    wait_for(&mut h, "the fio row", |app| app.cache.runs.len() == 3);
    let (message, error) = run_dialog(&mut h, &bundle, "Import");
    assert!(
        !error && message.ends_with("0 new, 2 already present"),
        "{message}"
    );
    let (message, error) = run_dialog(&mut h, &dir.path().join("missing"), "Import");
    assert!(error && message.contains("missing"), "{message}");
    assert_eq!(
        Store::open_read_only(&b)
            .unwrap()
            .list_runs(&Default::default())
            .unwrap()
            .len(),
        3
    );
}
