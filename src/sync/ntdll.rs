//! Windows: looking up an export of ntdll, which the loader-lock check (`registry`) and
//! the barrier's wine check (`barrier/flush.rs`) need. ntdll is mapped into every process
//! and never unloaded, so an address found once stays valid.

use std::ffi::CStr;
use windows_sys::Win32::Foundation::FARPROC;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};

/// ntdll's export `name`, if it has one. The caller must give the address its real type
/// before calling it (`std::mem::transmute`, with the signature in a `// SAFETY:`).
pub(crate) fn export(name: &CStr) -> FARPROC {
    // SAFETY: both names are NUL-terminated (`CStr`); GetModuleHandleA takes no reference
    // on the module, and ntdll is never unloaded.
    unsafe {
        let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
        if ntdll.is_null() {
            return None;
        }
        GetProcAddress(ntdll, name.as_ptr().cast())
    }
}
