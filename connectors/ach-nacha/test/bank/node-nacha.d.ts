// The bank simulator reads Corridor's uploads with @midlandsbank/node-nacha, a NACHA implementation
// Corridor does not use; it ships no types, so the part the simulator touches is declared here.
declare module "@midlandsbank/node-nacha" {
  export interface NodeNachaEntry {
    transactionCode: string;
    receivingDFIIdentification: number;
    checkDigit: number;
    dfiAccount: string;
    amount: number;
    identificationNumber: string;
    receivingCompanyName?: string;
    individualName?: string;
    addendaIndicator: string;
    traceNumber: number;
    addenda?: { type: string; info: string; num: number; entryNum: number };
  }
  export interface NodeNachaBatch {
    serviceClassCode: number;
    companyName: string;
    companyId: string;
    entryClassCode: string;
    description: string;
    effectiveDate: string;
    originatingDFIIdentification: string;
    num: number;
    entries: NodeNachaEntry[];
    footer: {
      serviceClassCode: number;
      entryAndAddendaCount: number;
      entryHash: number;
      totalDebit: number;
      totalCredit: number;
      companyId: string;
      originatingDFIIdentification: string;
      num: number;
    };
  }
  export interface NodeNachaFile {
    file: {
      destination: string;
      origin: string;
      creationDate: string;
      creationTime: string;
      idModifier: string;
      recordSize: string;
      blockingFactor: string;
      formatCode: string;
      footer: { batchCount: number; blockCount: number; entryAndAddendaCount: number; entryHash: number; totalDebit: number; totalCredit: number };
    };
    batches: NodeNachaBatch[];
  }
  export function from(source: string): { data: NodeNachaFile; to(format: "ach" | "json"): string };
}
