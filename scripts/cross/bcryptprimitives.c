/* A stand-in for Windows' bcryptprimitives.dll, which wine 8.0 lacks: Rust's std (1.78
 * and later) imports ProcessPrng from it for HashMap seeds and the like. This one
 * answers from RtlGenRandom (advapi32's SystemFunction036), which wine has. Built and
 * installed into the wine prefix by scripts/cross-check; used only under wine. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
