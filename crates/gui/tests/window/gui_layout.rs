//! No two interactive widgets of the Setup tab overlap, in every form layout (each
//! workload kind, both counting modes, fileio on io_uring with its settings enabled, the matrix and suggested-matrices sections open) at
//! the window's minimum size (900 × 600), its default size (1360 × 900), and both widths
//! with a tall window so every row of the form is on screen at once. Widget rectangles
//! are the accesskit node bounds egui publishes.

use crate::gui_common;

use egui::accesskit::Role;
use egui::{Rect, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab::spec::{FileioMode, IoEngine, WorkloadKind};
use fsynclab_gui::{LabApp, Tab, UiState};

/// The root filesystem's options on a machine of the CI's kind (its `/` is ext4).
const TYPICAL_OPTIONS: &str =
    "rw,relatime,discard,no_prefetch_block_bitmaps,resv_strict,resuid=65534,resgid=65534";

/// Roles a user clicks, types into or drags.
const INTERACTIVE: &[Role] = &[
    Role::Button,
    Role::DefaultButton,
    Role::CheckBox,
    Role::RadioButton,
    Role::TextInput,
    Role::MultilineTextInput,
    Role::ComboBox,
    Role::SpinButton,
    Role::Slider,
    Role::Link,
    Role::Tab,
];

/// An interactive widget: its id, its ancestors' ids, what it says and where it is.
struct Widget {
    id: String,
    ancestors: Vec<String>,
    name: String,
    rect: Rect,
}

fn widgets(h: &Harness<'static, LabApp>, window: Rect) -> Vec<Widget> {
    let mut out = Vec::new();
    for node in h.root().children_recursive() {
        let ak = node.accesskit_node();
        if !INTERACTIVE.contains(&ak.role()) || ak.is_hidden() {
            continue;
        }
        let Some(b) = ak.bounding_box() else { continue };
        let rect = Rect::from_min_max(
            pos2(b.x0 as f32, b.y0 as f32),
            pos2(b.x1 as f32, b.y1 as f32),
        );
        // Only what is on screen: rows scrolled out of the viewport share coordinates
        // with the panels around it.
        if !window.contains_rect(rect) || rect.area() < 1.0 {
            continue;
        }
        let mut ancestors = Vec::new();
        let mut up = ak.parent();
        while let Some(p) = up {
            ancestors.push(format!("{:?}", p.id()));
            up = p.parent();
        }
        let name = ak
            .label()
            .or_else(|| ak.value().map(|v| v.to_string()))
            .unwrap_or_default();
        out.push(Widget {
            id: format!("{:?}", ak.id()),
            ancestors,
            name: format!("{:?} {name:?}", ak.role()),
            rect,
        });
    }
    out
}

/// Every pair of widgets whose rectangles share more than half a pixel each way.
fn overlaps(widgets: &[Widget]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, a) in widgets.iter().enumerate() {
        for b in &widgets[i + 1..] {
            if a.ancestors.contains(&b.id) || b.ancestors.contains(&a.id) {
                continue;
            }
            let common = a.rect.intersect(b.rect);
            if common.width() > 0.5 && common.height() > 0.5 {
                found.push(format!(
                    "{} at {:?} overlaps {} at {:?}",
                    a.name, a.rect, b.name, b.rect
                ));
            }
        }
    }
    found
}

fn open_section(h: &mut Harness<'static, LabApp>, starts_with: &str) {
    let label = h
        .query_all_by_label_contains(starts_with)
        .next()
        .and_then(|n| n.accesskit_node().label());
    if let Some(label) = label {
        h.get_by_label(&label).click();
        h.run_steps(4);
    }
}

/// The Setup tab with `kind` (and `mode`, and `engine`) at `size`, sections open: its
/// overlaps. io_uring counts as available, so its settings are enabled.
fn layout_problems(
    size: (f32, f32),
    kind: WorkloadKind,
    mode: FileioMode,
    engine: IoEngine,
    mount_options: &str,
) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut state = UiState {
        tab: Tab::Setup,
        target: dir.path().display().to_string(),
        ..UiState::default()
    };
    state.spec.kind = kind;
    state.spec.mode = mode;
    state.spec.ioengine = engine;
    if engine == IoEngine::IoUring {
        state.spec.iodepth = 8;
    }
    let app = LabApp::new(dir.path().join("gui.sqlite"), state);
    let mut h = Harness::builder()
        .with_size(vec2(size.0, size.1))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app);
    h.state_mut().setup.set_io_uring_available(Ok(()));
    let (mounts, devices) = gui_common::mount_table(mount_options);
    h.state_mut().setup.use_mount_table(mounts, devices);
    h.run_steps(4);
    open_section(&mut h, "Matrix (scratch");
    open_section(&mut h, "Suggested matrices");
    h.run_steps(4);
    let window = Rect::from_min_size(pos2(0.0, 0.0), vec2(size.0, size.1));
    let all = widgets(&h, window);
    assert!(
        all.len() > 20,
        "only {} widgets found: the query is wrong",
        all.len()
    );
    overlaps(&all)
        .into_iter()
        .map(|o| format!("{kind:?}/{mode:?}/{engine:?} at {}×{}: {o}", size.0, size.1))
        .collect()
}

#[test]
fn no_setup_widgets_overlap_in_any_layout_at_min_and_default_sizes() {
    let layouts = [
        (WorkloadKind::Fileio, FileioMode::Fio, IoEngine::Sync),
        (WorkloadKind::Fileio, FileioMode::Fio, IoEngine::IoUring),
        (WorkloadKind::Fileio, FileioMode::Sysbench, IoEngine::Sync),
        (WorkloadKind::Smallfiles, FileioMode::Fio, IoEngine::Sync),
        (WorkloadKind::Fileserver, FileioMode::Fio, IoEngine::Sync),
        (WorkloadKind::Grouplog, FileioMode::Fio, IoEngine::Sync),
    ];
    let sizes = [
        (900.0, 600.0),
        (1360.0, 900.0),
        (900.0, 3000.0),
        (1360.0, 3000.0),
    ];
    let mut problems = Vec::new();
    for size in sizes {
        for (kind, mode, engine) in layouts {
            problems.extend(layout_problems(size, kind, mode, engine, TYPICAL_OPTIONS));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_overlap_check_sees_an_overlap() {
    // The checker itself: two rectangles that share a corner region are reported, a
    // widget inside its own container is not.
    let a = Widget {
        id: "1".into(),
        ancestors: vec![],
        name: "a".into(),
        rect: Rect::from_min_size(pos2(0.0, 0.0), vec2(10.0, 10.0)),
    };
    let b = Widget {
        id: "2".into(),
        ancestors: vec![],
        name: "b".into(),
        rect: Rect::from_min_size(pos2(5.0, 5.0), vec2(10.0, 10.0)),
    };
    let inner = Widget {
        id: "3".into(),
        ancestors: vec!["1".into()],
        name: "inner".into(),
        rect: Rect::from_min_size(pos2(1.0, 1.0), vec2(2.0, 2.0)),
    };
    assert_eq!(overlaps(&[a, b]).len(), 1);
    let a = Widget {
        id: "1".into(),
        ancestors: vec![],
        name: "a".into(),
        rect: Rect::from_min_size(pos2(0.0, 0.0), vec2(4.0, 4.0)),
    };
    assert!(overlaps(&[a, inner]).is_empty());
}

/// The height of the status bar at the window's foot (one line of text in its frame): a
/// widget whose bottom edge is below `height - STATUS_BAR` is hidden under it or below.
const STATUS_BAR: f32 = 28.0;

/// Where a fresh window (every setting at its default: the default preset, the sync engine,
/// io_uring available) draws the Run options' Label field at the default size, 1360 × 900.
fn label_field_at_default_size(mount_options: &str) -> Rect {
    let dir = tempfile::tempdir().unwrap();
    let state = UiState {
        tab: Tab::Setup,
        target: dir.path().display().to_string(),
        ..UiState::default()
    };
    let app = LabApp::new(dir.path().join("gui.sqlite"), state);
    let mut h = Harness::builder()
        .with_size(vec2(1360.0, 900.0))
        .build_ui_state(|ui, app: &mut LabApp| app.ui_root(ui), app);
    h.state_mut().setup.set_io_uring_available(Ok(()));
    let (mounts, devices) = gui_common::mount_table(mount_options);
    h.state_mut().setup.use_mount_table(mounts, devices);
    h.run_steps(4);
    assert!(
        h.query_all_by_label_contains("Target is on ext4")
            .next()
            .is_some(),
        "the target line of the fixed mount table is not drawn"
    );
    let node = h.get_by_role_and_label(Role::TextInput, "Label");
    let b = node
        .accesskit_node()
        .bounding_box()
        .expect("the Label field has bounds");
    Rect::from_min_max(
        pos2(b.x0 as f32, b.y0 as f32),
        pos2(b.x1 as f32, b.y1 as f32),
    )
}

#[test]
fn the_run_options_are_above_the_fold_at_the_default_size_with_the_default_settings() {
    let fold = 900.0 - STATUS_BAR;
    let label = label_field_at_default_size(TYPICAL_OPTIONS);
    eprintln!("Label field at {label:?}");
    assert!(
        label.min.y > 0.0 && label.max.y <= fold,
        "the Run options' Label field is at {label:?}, below the fold at y = {fold} of a \
         1360×900 window: a first-time user does not see it"
    );
}

/// A host whose target filesystem has 300 characters of mount options (this machine's `/`
/// has 85): the form still lays out without overlaps at the minimum size, and the Run
/// options stay above the fold at the default size. The window's layout never depends on
/// the mounts of the machine it runs on.
#[test]
fn a_target_with_300_characters_of_mount_options_still_lays_out() {
    let long: String = (0..40)
        .map(|i| format!("opt{i}=value{i},"))
        .collect::<String>()
        .chars()
        .take(300)
        .collect();
    assert_eq!(long.chars().count(), 300);
    let mut problems = Vec::new();
    for size in [(900.0, 600.0), (1360.0, 900.0)] {
        problems.extend(layout_problems(
            size,
            WorkloadKind::Fileio,
            FileioMode::Fio,
            IoEngine::Sync,
            &long,
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let fold = 900.0 - STATUS_BAR;
    let label = label_field_at_default_size(&long);
    assert!(
        label.min.y > 0.0 && label.max.y <= fold,
        "with 300 characters of mount options the Run options' Label field is at {label:?}, \
         below the fold at y = {fold}"
    );
}
