/**
 * A file this connector cannot take: a message or version it does not read, a document that is not
 * well-formed, a field missing or out of range. The message says which; nothing of the file is used.
 */
export class Iso20022Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Iso20022Error";
  }
}
