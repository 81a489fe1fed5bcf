//! Whether the machine is a virtual one and which hypervisor: `/sys/hypervisor/type`, the
//! `hypervisor` CPU flag of `/proc/cpuinfo`, the hypervisor's cpuid signature (leaf
//! 0x40000000, x86 only) and the DMI vendor and product. Pure [`detect_virtualization`]
//! over what the reader found.

use crate::sysinfo::Virtualization;

/// What the reader found; every field may be missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VirtSigns {
    /// `/sys/hypervisor/type` (`xen`).
    pub hypervisor_type: Option<String>,
    /// `/proc/cpuinfo`, when readable.
    pub cpuinfo: Option<String>,
    /// The 12-byte signature of cpuid leaf 0x40000000 (`KVMKVMKVM`), trimmed of NULs.
    pub cpuid_signature: Option<String>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub dmi_sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<String>,
}

/// The hypervisor a cpuid leaf 0x40000000 signature names.
fn hypervisor_of_signature(signature: &str) -> Option<&'static str> {
    Some(match signature.trim_matches(char::from(0)).trim() {
        "KVMKVMKVM" | "Linux KVM Hv" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG)",
        "VBoxVBoxVBox" => "VirtualBox",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "lrpepyh  vr" | "prl hyperv" => "Parallels",
        "QNXQVMBSQG" => "QNX",
        "EVMMEVMMEVMM" => "Intel EVMM",
        _ => return None,
    })
}

/// The hypervisor DMI names (systemd-detect-virt's table, the common entries).
fn hypervisor_of_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    let has = |text: &str, word: &str| text.to_ascii_lowercase().contains(word);
    let either = |word: &str| has(vendor, word) || has(product, word);
    Some(if either("qemu") || has(vendor, "bochs") {
        "QEMU"
    } else if either("vmware") {
        "VMware"
    } else if either("virtualbox") || has(vendor, "innotek") {
        "VirtualBox"
    } else if has(vendor, "microsoft") && has(product, "virtual machine") {
        "Hyper-V"
    } else if either("xen") {
        "Xen"
    } else if has(vendor, "amazon ec2") {
        "KVM (Amazon EC2)"
    } else if has(product, "google compute engine") {
        "KVM (Google Compute Engine)"
    } else if either("parallels") {
        "Parallels"
    } else if has(product, "kvm") {
        "KVM"
    } else {
        return None;
    })
}

/// Whether `/proc/cpuinfo` has the `hypervisor` flag on its first `flags` line; `None`
/// when there is no x86 `flags` line to look at.
fn cpuinfo_hypervisor_flag(cpuinfo: &str) -> Option<bool> {
    let flags = cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "flags").then_some(value)
    })?;
    Some(flags.split_whitespace().any(|flag| flag == "hypervisor"))
}

/// Decides from `signs`: a named hypervisor (cpuid first, then `/sys/hypervisor/type`, then
/// DMI) or the CPU flag makes the machine virtual; an x86 `flags` line without the flag and
/// nothing else makes it physical; otherwise unknown.
pub fn detect_virtualization(signs: &VirtSigns) -> Virtualization {
    let mut found = Virtualization::default();
    let flag = signs.cpuinfo.as_deref().and_then(cpuinfo_hypervisor_flag);
    if flag == Some(true) {
        found.evidence.push("cpuinfo flag hypervisor".into());
    }
    if let Some(signature) = &signs.cpuid_signature
        && let Some(name) = hypervisor_of_signature(signature)
    {
        found.hypervisor = Some(name.into());
        found.evidence.push(format!("cpuid {}", signature.trim()));
    }
    if let Some(kind) = signs.hypervisor_type.as_deref().map(str::trim)
        && !kind.is_empty()
    {
        let name = if kind == "xen" { "Xen" } else { kind };
        found.hypervisor.get_or_insert_with(|| name.to_string());
        found.evidence.push(format!("/sys/hypervisor/type {kind}"));
    }
    let vendor = signs.dmi_sys_vendor.as_deref().unwrap_or("").trim();
    let product = signs.dmi_product_name.as_deref().unwrap_or("").trim();
    if let Some(name) = hypervisor_of_dmi(vendor, product) {
        found.hypervisor.get_or_insert_with(|| name.to_string());
        found.evidence.push(format!("DMI {vendor} / {product}"));
    }
    found.is_virtual = if found.hypervisor.is_some() || flag == Some(true) {
        Some(true)
    } else {
        flag
    };
    found
}

/// The signature of cpuid leaf 0x40000000 when the CPU says a hypervisor is present (leaf
/// 1, ECX bit 31); `None` elsewhere and on other architectures.
pub fn cpuid_hypervisor_signature() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // cpuid is unprivileged and side-effect free on every x86_64 CPU.
        let leaf1 = __cpuid(1);
        if leaf1.ecx & (1 << 31) == 0 {
            return None;
        }
        let leaf = __cpuid(0x4000_0000);
        let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
            .iter()
            .flat_map(|word| word.to_le_bytes())
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let trimmed = text.trim_matches(char::from(0)).to_string();
        (!trimmed.is_empty()).then_some(trimmed)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = include_str!("../../../../tests/fixtures/probe/kernel/cpuinfo.txt");

    #[test]
    fn this_vm_is_kvm_by_cpu_flag_and_signature() {
        // Recorded on the lab VM (Firecracker on KVM: no DMI, no /sys/hypervisor).
        let signs = VirtSigns {
            cpuinfo: Some(CPUINFO.into()),
            cpuid_signature: Some("KVMKVMKVM".into()),
            ..VirtSigns::default()
        };
        let v = detect_virtualization(&signs);
        assert_eq!(v.is_virtual, Some(true));
        assert_eq!(v.hypervisor.as_deref(), Some("KVM"));
        assert_eq!(
            v.evidence,
            vec!["cpuinfo flag hypervisor", "cpuid KVMKVMKVM"]
        );
        // Without the signature: virtual, hypervisor unnamed.
        let flag_only = detect_virtualization(&VirtSigns {
            cpuinfo: Some(CPUINFO.into()),
            ..VirtSigns::default()
        });
        assert_eq!(
            (flag_only.is_virtual, flag_only.hypervisor),
            (Some(true), None)
        );
    }

    #[test]
    fn bare_metal_and_unknown() {
        let metal = CPUINFO.replace(" hypervisor ", " ");
        let v = detect_virtualization(&VirtSigns {
            cpuinfo: Some(metal),
            dmi_sys_vendor: Some("Dell Inc.".into()),
            dmi_product_name: Some("PowerEdge R650".into()),
            ..VirtSigns::default()
        });
        assert_eq!(
            v,
            Virtualization {
                is_virtual: Some(false),
                ..Virtualization::default()
            }
        );
        // An arm64 cpuinfo has no `flags` line: nothing says either way.
        let arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm\n";
        let v = detect_virtualization(&VirtSigns {
            cpuinfo: Some(arm.into()),
            ..VirtSigns::default()
        });
        assert_eq!(v.is_virtual, None);
    }

    #[test]
    fn dmi_and_xen_name_the_hypervisor() {
        let dmi = |vendor: &str, product: &str| {
            detect_virtualization(&VirtSigns {
                dmi_sys_vendor: Some(vendor.into()),
                dmi_product_name: Some(product.into()),
                ..VirtSigns::default()
            })
        };
        let qemu = dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)");
        assert_eq!(qemu.hypervisor.as_deref(), Some("QEMU"));
        assert_eq!(qemu.is_virtual, Some(true));
        assert_eq!(
            qemu.evidence,
            vec!["DMI QEMU / Standard PC (Q35 + ICH9, 2009)"]
        );
        assert_eq!(
            dmi("Microsoft Corporation", "Virtual Machine")
                .hypervisor
                .as_deref(),
            Some("Hyper-V")
        );
        assert_eq!(
            dmi("Microsoft Corporation", "Surface Laptop").hypervisor,
            None
        );
        assert_eq!(
            dmi("innotek GmbH", "VirtualBox").hypervisor.as_deref(),
            Some("VirtualBox")
        );
        let xen = detect_virtualization(&VirtSigns {
            hypervisor_type: Some("xen\n".into()),
            ..VirtSigns::default()
        });
        assert_eq!(xen.hypervisor.as_deref(), Some("Xen"));
        assert_eq!(xen.evidence, vec!["/sys/hypervisor/type xen"]);
        // cpuid names the hypervisor before DMI does.
        let both = detect_virtualization(&VirtSigns {
            cpuid_signature: Some("Microsoft Hv".into()),
            dmi_sys_vendor: Some("QEMU".into()),
            ..VirtSigns::default()
        });
        assert_eq!(both.hypervisor.as_deref(), Some("Hyper-V"));
        // An unknown signature names nothing.
        let odd = detect_virtualization(&VirtSigns {
            cpuid_signature: Some("NotAHypervis".into()),
            ..VirtSigns::default()
        });
        assert_eq!((odd.is_virtual, odd.hypervisor), (None, None));
    }

    #[test]
    fn cpuid_agrees_with_the_cpu_flag_here() {
        let flag = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| cpuinfo_hypervisor_flag(&text));
        let signature = cpuid_hypervisor_signature();
        if flag.is_none() {
            eprintln!("skipped: no x86 flags line in /proc/cpuinfo on this machine");
            return;
        }
        // The signature is read only when leaf 1 sets the bit the kernel shows as the flag.
        if signature.is_some() {
            assert_eq!(flag, Some(true), "{signature:?}");
        }
        if flag == Some(false) {
            assert_eq!(signature, None);
        }
    }
}
