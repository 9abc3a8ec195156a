/**
 * @corridor/connector/bank-files: the bank's file drop a file-based connector uploads to and reads
 * from (drop.ts: the interface and its guarantees), over SFTP (sftp.ts) or a local directory
 * (directory.ts). A subpath of its own so that connectors without files never load ssh2.
 */
export { BankFileDropError, checkFileName, type BankFile, type BankFileDrop, type UploadResult } from "./drop.js";
export { directoryDrop, type DirectoryDropFolders } from "./directory.js";
export { SftpTransport, SftpTransportError, hostKeyFingerprint, type SftpSettings } from "./sftp.js";
