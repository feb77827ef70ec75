/* Hex digits in text: the one reader of a digit's value that the config
 * file's uuids, the PCI bus id spellings and the tool's hex input share.
 * Header-only and below every layer: it knows nothing of fabmem. */
#ifndef FABMEM_BASE_HEX_H
#define FABMEM_BASE_HEX_H

/* The value of the hex digit c (either case), or -1 when c is none. */
static inline int fab__hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif /* FABMEM_BASE_HEX_H */
