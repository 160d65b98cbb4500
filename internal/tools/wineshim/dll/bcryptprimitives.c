/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it: the Go runtime calls
 * ProcessPrng from it at start and aborts without it. This stand-in fills
 * the buffer with advapi32's SystemFunction036 (RtlGenRandom), which Wine
 * has, in pieces of at most a ULONG: RtlGenRandom takes a ULONG length and
 * ProcessPrng a SIZE_T. Only for running tests under Wine; Windows 10 and
 * later ship the real DLL.
 */
#include <limits.h>
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* ProcessPrng never fails on Windows and its callers cannot recover, so a
 * failure here ends the process rather than hand back a buffer unfilled. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG chunk = len > (SIZE_T)ULONG_MAX ? ULONG_MAX : (ULONG)len;
		if (!SystemFunction036(data, chunk))
			ExitProcess(1);
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}
