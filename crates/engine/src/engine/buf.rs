//! Write buffers: the seeded fill pattern and a heap buffer aligned for O_DIRECT, shared by
//! the synchronous backends (file) and the io_uring rings (ring, fake_ring) without either
//! depending on the other.

/// Incompressible bytes (so compressing or deduplicating filesystems store what they are
/// given), derived from `seed`.
pub fn fill_pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut state = seed ^ 0xF5C1_AB00_0000_0001;
    while out.len() < len {
        state = super::offsets::mix(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A heap buffer aligned for O_DIRECT (4096 bytes), filled once before timing.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

/// Alignment of write buffers: enough for O_DIRECT on every common device.
pub const BUFFER_ALIGN: usize = 4096;

impl AlignedBuf {
    /// A buffer of `len` bytes (len > 0) aligned to [`BUFFER_ALIGN`], holding `fill_pattern(len, seed)`.
    pub fn new(len: usize, seed: u64) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(16), BUFFER_ALIGN)
            .expect("block size is validated to at most 64 MiB");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout);
        };
        let mut buf = Self { ptr, layout };
        buf.as_mut_slice()
            .copy_from_slice(&fill_pattern(len.max(1), seed));
        buf
    }

    /// Writes two words into the first 16 bytes (blocks are at least 512 bytes), so each
    /// write carries different data.
    #[inline(always)]
    pub fn stamp(&mut self, a: u64, b: u64) {
        let bytes = self.as_mut_slice();
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..16].copy_from_slice(&b.to_le_bytes());
    }

    /// Lets `fill` write the whole buffer (a crash test's record).
    pub fn fill_with(&mut self, fill: impl FnOnce(&mut [u8])) {
        fill(self.as_mut_slice());
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}
