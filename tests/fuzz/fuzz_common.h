/* fuzz_common: what the probe fuzzer and the seed generator must agree on. */
#ifndef BM_FUZZ_COMMON_H
#define BM_FUZZ_COMMON_H

#include <stdint.h>

#include "common/wire.h"

/* The one live session in fuzz_probe's table: its token and client address (TEST-NET-1). */
static const uint8_t fuzz_token[WIRE_TOKEN_LEN] = { 0x62, 0x6d, 0x2d, 0x66, 0x75, 0x7a, 0x7a, 0x2d,
						    0x74, 0x6f, 0x6b, 0x65, 0x6e, 0x2d, 0x30, 0x31 };
#define FUZZ_CLIENT_IP "192.0.2.1"

#endif
