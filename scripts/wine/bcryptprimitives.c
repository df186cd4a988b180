/* A stand-in for Windows' bcryptprimitives.dll, for Wine before 9.0 only (scripts/package-check.sh
 * builds it into the Wine prefix; it never ships). Rust's standard library takes its random
 * numbers from ProcessPrng in that DLL, which Windows 10 and later have and Wine 8 lacks; this
 * forwards to advapi32's RtlGenRandom (SystemFunction036), which Wine 8 has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
