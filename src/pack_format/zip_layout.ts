// The ZIP records a pack is made of (APPNOTE.TXT 4.3): their signatures, fixed lengths and the
// flags that matter. The builder's writer (src/compliance/zip_writer.ts) and the verifier's
// defensive reader (src/verify/zip_reader.ts) both lay records out from these numbers. A pack
// uses only this subset: local headers, central directory headers, the end record, and past
// 65 535 members the ZIP64 end record and its locator (sizes and offsets stay 32-bit).

/** Local file header signature (`PK\3\4`). */
export const ZIP_LOCAL_SIG = 0x04034b50;
/** Central directory file header signature (`PK\1\2`). */
export const ZIP_CENTRAL_SIG = 0x02014b50;
/** End of central directory record signature (`PK\5\6`). */
export const ZIP_END_SIG = 0x06054b50;
/** ZIP64 end of central directory record signature (`PK\6\6`). */
export const ZIP64_END_SIG = 0x06064b50;
/** ZIP64 end of central directory locator signature (`PK\6\7`). */
export const ZIP64_LOCATOR_SIG = 0x07064b50;

/** Fixed part of a local header, before the name and extra field. */
export const ZIP_LOCAL_LEN = 30;
/** Fixed part of a central directory header, before name, extra field and comment. */
export const ZIP_CENTRAL_LEN = 46;
/** The end record without its comment. */
export const ZIP_END_LEN = 22;
/** The ZIP64 end record (version 1, no extensible data). */
export const ZIP64_END_LEN = 56;
/** The ZIP64 end record locator. */
export const ZIP64_LOCATOR_LEN = 20;

/** General-purpose flag: the member is encrypted (traditional PKWARE). */
export const ZIP_FLAG_ENCRYPTED = 0x0001;
/** General-purpose flag: strong encryption. */
export const ZIP_FLAG_STRONG_ENCRYPTION = 0x0040;
/** General-purpose flag: the name is UTF-8 (set when a name is not ASCII). */
export const ZIP_FLAG_UTF8 = 0x0800;

/** Compression methods a pack uses: stored and DEFLATE. */
export const ZIP_METHOD_STORED = 0;
/** DEFLATE. */
export const ZIP_METHOD_DEFLATE = 8;
