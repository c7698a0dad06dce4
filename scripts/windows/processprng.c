/* bcryptprimitives.dll for wine 8, which lacks ProcessPrng: Rust's std (>= 1.78) imports it for
 * its random numbers (HashMap keys). This stand-in fills the buffer from RtlGenRandom
 * (advapi32's SystemFunction036), which wine has. Used only by scripts/windows-check.sh, in its
 * own wine prefix; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
