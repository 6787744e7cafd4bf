import { posix } from 'node:path';
import { UsageError, XlsxError } from '../errors.js';
import { zipKind } from './file-kind.js';
import { builtinFormat, compileFormat, formatIsoDate, formatNumber, formatText, type NumberFormat } from './cell-format.js';
import { MAX_LINE, tooLong } from './decode.js';
import { FormulaCells } from './formula-cells.js';
import { interruptedReading } from './spool.js';
import { attr, XmlTokenizer, type XmlHandler } from './xml.js';
import { ZipFile, type ZipEntry } from './zip.js';

/** A zip archive's first bytes: every .xlsx starts with them. */
export const isZip = (head: Buffer): boolean => head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
/** An OLE2 compound file: the legacy binary .xls (and a password-protected .xlsx). */
export const isOle2 = (head: Buffer): boolean => head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0;

/**
 * The reader's limits, generous for any real workbook, so that a hostile one
 * is refused by name instead of taking the machine's memory. The shared
 * strings are the one part held whole (a sheet refers to them by number);
 * they are kept as UTF-8, four bytes of index each.
 */
export const XLSX_LIMITS = {
  /** distinct texts in the shared-string table */
  sharedStrings: 16_000_000,
  /** their total size, in bytes of UTF-8 */
  sharedStringBytes: 256 * 1024 * 1024,
  /** one cell's text, and one row's (as for a CSV record) */
  cell: MAX_LINE,
  /** cells in a row: Excel's own maximum, column XFD */
  columns: 16_384,
  /** cell formats in styles.xml: Excel's own maximum is 64,000 */
  styles: 65_536,
} as const;

export interface XlsxOptions {
  /** a name or a 1-based number; the first sheet by default */
  sheet?: string;
  /** stops the reading of shared strings and rows (Ctrl-C) */
  signal?: AbortSignal;
  /** progress: the sheet's compressed size, and how much of it has been read (the other parts are small beside it) */
  progress?: { read: number; total?: number };
  /** lower limits, for tests that cannot afford a 256 MB part */
  limits?: Partial<Limits>;
  /** filled in as the sheet is read: its first row's number, and its width when `<dimension>` gives it */
  shape?: SheetShape;
}

export interface SheetShape {
  /** the sheet's row number of the first row handed on (the header) */
  firstRow?: number;
  /** columns in the sheet's used range, as its `<dimension ref="A1:D7">` declares it (a hint: it may be missing or wrong) */
  width?: number;
}

type Limits = { -readonly [K in keyof typeof XLSX_LIMITS]: number };

/**
 * The rows of one sheet of a workbook file, as the text a user sees in its
 * cells, a chunk at a time. The parts are found through the zip's directory
 * and the workbook's relationships, so their order in the archive does not
 * matter; only the shared strings are held, the sheet is streamed.
 */
export async function* xlsxRecords(path: string, name: string, options: XlsxOptions = {}): AsyncGenerator<string[][]> {
  const fail = (reason: string): XlsxError => new XlsxError(`${name}: not a readable .xlsx: ${printable(reason)}`);
  const zip = await ZipFile.open(path, fail);
  const limits: Limits = { ...XLSX_LIMITS, ...options.limits };
  try {
    const book = await readWorkbook(zip, fail, options, limits, name);
    const target = pickSheet(book.sheets, options.sheet, name);
    const entry = zip.entry(target.path);
    if (!entry) throw fail(`the sheet "${target.name}" (${target.path}) is missing from the archive`);
    yield* sheetRows(zip, entry, book, fail, name, options, limits);
  } catch (err) {
    if (options.signal?.aborted) throw interruptedReading(name, options.signal);
    if (err instanceof UsageError) throw err;
    // anything else the file does to us is still the file's fault, said in one line
    throw new XlsxError(`${name}: not a readable .xlsx: ${printable((err as Error).message)}`, { cause: err });
  } finally {
    await zip.close();
  }
}

/**
 * The cells of the sheet that hold a formula with no saved value (what
 * openpyxl writes), found before the rows are read: such a cell reads as
 * empty, and in the address column that would check nothing and say nothing.
 * Most workbooks hold none, so the sheet is first only inflated and searched
 * for a formula element, and parsed only when one is there: at 500,000 rows
 * the search took 0.24 s where a parse takes 2.2–3.4 s (as long as reading
 * the rows), on 2 loaded cores.
 */
export async function xlsxFormulaCells(path: string, name: string, options: Pick<XlsxOptions, 'sheet' | 'signal' | 'limits'> = {}): Promise<FormulaCells> {
  const fail = (reason: string): XlsxError => new XlsxError(`${name}: not a readable .xlsx: ${printable(reason)}`);
  const zip = await ZipFile.open(path, fail);
  const limits: Limits = { ...XLSX_LIMITS, ...options.limits };
  const found = new FormulaCells();
  try {
    const target = pickSheet((await sheetList(zip, fail, options, name)).sheets, options.sheet, name);
    const entry = zip.entry(target.path);
    if (!entry) throw fail(`the sheet "${target.name}" (${target.path}) is missing from the archive`);
    if (!(await holdsFormula(zip, entry, options.signal))) return found;
    let row = 0;
    let col = -1;
    let type = '';
    let formula = false;
    let hasValue = false;
    let valued = false;
    let inValue = false;
    await parsePart(zip, entry, fail, options, {
      get wantText() {
        return inValue;
      },
      open(tag, attrs, selfClosing) {
        if (tag === 'row') {
          const r = Number(attr(attrs, 'r'));
          row = Number.isInteger(r) && r > 0 ? r : row + 1;
          col = -1;
        } else if (tag === 'c') {
          const ref = attr(attrs, 'r');
          const at = ref === undefined ? -1 : columnOf(ref);
          col = at >= 0 ? at : col + 1;
          if (col >= limits.columns) throw fail(`row ${row} is wider than ${limits.columns} columns (the limit)`);
          type = attr(attrs, 't') ?? 'n';
          formula = hasValue = valued = false;
        } else if (tag === 'f') formula = true;
        else if (tag === 'v') {
          hasValue = true;
          inValue = !selfClosing;
        }
      },
      close(tag) {
        if (tag === 'v') inValue = false;
        // a formula's saved value may be an empty text (t="str"), never an empty number
        else if (tag === 'c' && formula && (!hasValue || (!valued && type !== 'str'))) found.add(col, row);
      },
      text(t) {
        if (!valued && t.trim() !== '') valued = true;
      },
    });
    return found;
  } catch (err) {
    if (options.signal?.aborted) throw interruptedReading(name, options.signal);
    if (err instanceof UsageError) throw err;
    throw new XlsxError(`${name}: not a readable .xlsx: ${printable((err as Error).message)}`, { cause: err });
  } finally {
    await zip.close();
  }
}

/** Whether a part holds a formula element (`<f>`, `<f t="shared" …/>`, `<x:f>`), by a search of its text, not a parse. */
async function holdsFormula(zip: ZipFile, entry: ZipEntry, signal: AbortSignal | undefined): Promise<boolean> {
  const element = /<(?:[A-Za-z_][\w.-]*:)?f[\s/>]/;
  let tail = '';
  for await (const chunk of zip.read(entry)) {
    signal?.throwIfAborted();
    // latin1: one character per byte, and the markup is ASCII
    const text = tail + chunk.toString('latin1');
    if (element.test(text)) return true;
    tail = text.slice(-64);
  }
  return false;
}

/** A reason fit for one line of a terminal: a damaged file's part names can hold any bytes. */
function printable(reason: string): string {
  const clean = reason.replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '?');
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

interface Workbook {
  sheets: { name: string; path: string }[];
  strings: StringTable;
  formats: NumberFormat[];
  date1904: boolean;
}

/** The names of a workbook's worksheets, in tab order (chart sheets left out). */
export async function xlsxSheetNames(path: string, name: string): Promise<string[]> {
  const fail = (reason: string): XlsxError => new XlsxError(`${name}: not a readable .xlsx: ${printable(reason)}`);
  const zip = await ZipFile.open(path, fail);
  try {
    return (await sheetList(zip, fail, {}, name)).sheets.map((s) => s.name);
  } finally {
    await zip.close();
  }
}

async function readWorkbook(zip: ZipFile, fail: (reason: string) => XlsxError, options: XlsxOptions, limits: Limits, name: string): Promise<Workbook> {
  const { sheets, date1904, rels } = await sheetList(zip, fail, options, name);
  // A part the workbook names must be there: read without its styles, a zip
  // code 01234 would quietly become 1234.
  const part = (type: string, fallback: string): ZipEntry | undefined => {
    const named = rels.find((r) => r.type.endsWith(type))?.target;
    if (named === undefined) return zip.entry(fallback);
    const entry = zip.entry(named);
    if (!entry) throw fail(`${named} is missing from the archive`);
    return entry;
  };
  const stringsEntry = part('/sharedStrings', 'xl/sharedStrings.xml');
  const stylesEntry = part('/styles', 'xl/styles.xml');
  return {
    sheets,
    strings: stringsEntry ? await sharedStrings(zip, stringsEntry, fail, options, limits) : new StringTable(fail, limits),
    formats: stylesEntry ? await cellFormats(zip, stylesEntry, fail, options, limits) : [],
    date1904,
  };
}

async function sheetList(
  zip: ZipFile,
  fail: (reason: string) => XlsxError,
  options: XlsxOptions,
  name: string,
): Promise<{ sheets: { name: string; path: string }[]; date1904: boolean; rels: Relationship[] }> {
  const rootRels = await relationships(zip, '', fail, options);
  const officeDocument = rootRels.find((r) => r.type.endsWith('/officeDocument'))?.target;
  // a Word file or any other zip is the wrong file, not a damaged workbook
  const other = zipKind(zip, officeDocument);
  // (an XlsxError, as for any zip that cannot be read as a workbook)
  if (other !== undefined) throw new XlsxError(`${name} is ${other}, not an Excel workbook (.xlsx) or a list of addresses`);
  const bookPath = officeDocument ?? 'xl/workbook.xml';
  const bookEntry = zip.entry(bookPath);
  if (!bookEntry) throw fail('no workbook part (is it a spreadsheet?)');
  const rels = await relationships(zip, bookPath, fail, options);
  const byId = new Map(rels.map((r) => [r.id, r]));
  const sheets: { name: string; path: string }[] = [];
  let date1904 = false;
  await parsePart(zip, bookEntry, fail, options, {
    wantText: false,
    open(tag, attrs) {
      if (tag === 'workbookPr') date1904 = /^(1|true)$/.test(attr(attrs, 'date1904') ?? '');
      if (tag !== 'sheet') return;
      const rel = byId.get(attr(attrs, 'id') ?? '');
      // chart sheets and dialog sheets hold no rows
      if (rel && !rel.type.endsWith('/worksheet')) return;
      const sheetName = attr(attrs, 'name') ?? `Sheet${sheets.length + 1}`;
      sheets.push({ name: sheetName, path: rel?.target ?? `xl/worksheets/sheet${sheets.length + 1}.xml` });
    },
    close() {},
    text() {},
  });
  if (sheets.length === 0) throw fail('the workbook has no worksheet');
  return { sheets, date1904, rels };
}

function pickSheet(sheets: { name: string; path: string }[], sheet: string | undefined, name: string): { name: string; path: string } {
  const found = sheet === undefined ? sheets[0] : /^\d+$/.test(sheet) ? sheets[Number(sheet) - 1] : sheets.find((s) => s.name === sheet);
  if (!found) throw new UsageError(`--sheet ${sheet}: no such sheet in ${name} (sheets: ${sheets.map((s) => s.name).join(', ')})`);
  return found;
}

interface Relationship {
  id: string;
  type: string;
  /** the part's path inside the archive */
  target: string;
}

/** The relationships of a part (`xl/workbook.xml` → `xl/_rels/workbook.xml.rels`); none when it has no rels part. */
async function relationships(zip: ZipFile, source: string, fail: (reason: string) => XlsxError, options: XlsxOptions): Promise<Relationship[]> {
  const dir = posix.dirname(source);
  const entry = zip.entry(posix.join(dir, '_rels', `${posix.basename(source)}.rels`));
  if (!entry) return [];
  const rels: Relationship[] = [];
  await parsePart(zip, entry, fail, options, {
    wantText: false,
    open(tag, attrs) {
      if (tag !== 'Relationship' || rels.length >= 100_000) return;
      const target = attr(attrs, 'Target') ?? '';
      if (attr(attrs, 'TargetMode') === 'External') return;
      rels.push({
        id: attr(attrs, 'Id') ?? '',
        type: attr(attrs, 'Type') ?? '',
        target: target.startsWith('/') ? posix.normalize(target).slice(1) : posix.normalize(posix.join(dir, target)),
      });
    },
    close() {},
    text() {},
  });
  return rels;
}

/** Reads a part through a handler, a chunk at a time. */
async function parsePart(zip: ZipFile, entry: ZipEntry, fail: (reason: string) => XlsxError, options: XlsxOptions, handler: XmlHandler): Promise<void> {
  for await (const _ of parseChunks(zip, entry, fail, options, handler)) void _;
}

async function* parseChunks(
  zip: ZipFile,
  entry: ZipEntry,
  fail: (reason: string) => XlsxError,
  options: XlsxOptions,
  handler: XmlHandler,
  onRead?: (bytes: number) => void,
): AsyncGenerator<void> {
  const xml = new XmlTokenizer(handler, (reason) => fail(`${entry.name}: ${reason}`));
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of zip.read(entry, onRead)) {
    options.signal?.throwIfAborted();
    xml.write(decoder.decode(chunk, { stream: true }));
    yield;
  }
  xml.write(decoder.decode());
  xml.end();
}

/**
 * Excel escapes characters XML cannot carry as `_xHHHH_` (a carriage return is
 * `_x000D_`, and a literal `_x` is written `_x005F_x`).
 */
function unescapeOoxml(text: string): string {
  return text.indexOf('_x') < 0 ? text : text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The shared strings, as UTF-8 in pages that no string crosses, and where each
 * begins: four bytes per string besides its text, so a table of millions of
 * short strings stays small.
 */
class StringTable {
  private static readonly PAGE = 4 * 1024 * 1024;
  private readonly pages: Buffer[] = [];
  private readonly used: number[] = [];
  private starts = new Uint32Array(1024);
  count = 0;
  private bytes = 0;

  constructor(
    private readonly fail: (reason: string) => XlsxError,
    private readonly limits: Limits,
  ) {}

  add(text: string): void {
    if (this.count >= this.limits.sharedStrings) {
      throw this.fail(`more than ${this.limits.sharedStrings.toLocaleString('en-US')} shared strings (the limit)`);
    }
    const length = Buffer.byteLength(text);
    this.bytes += length;
    if (this.bytes > this.limits.sharedStringBytes) {
      throw this.fail(`shared strings over ${mb(this.limits.sharedStringBytes)} (the limit)`);
    }
    let page = this.pages.length - 1;
    if (page < 0 || this.used[page]! + length > StringTable.PAGE) {
      this.pages.push(Buffer.allocUnsafe(Math.max(StringTable.PAGE, length)));
      this.used.push(0);
      page++;
    }
    if (this.count === this.starts.length) {
      const grown = new Uint32Array(Math.min(this.starts.length * 2, this.limits.sharedStrings + 1));
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.count++] = page * StringTable.PAGE + this.used[page]!;
    this.used[page]! += this.pages[page]!.write(text, this.used[page]!);
  }

  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.count)) return undefined;
    const start = this.starts[index]!;
    const page = Math.floor(start / StringTable.PAGE);
    const next = index + 1 < this.count ? this.starts[index + 1]! : -1;
    const end = next >= 0 && Math.floor(next / StringTable.PAGE) === page ? next : page * StringTable.PAGE + this.used[page]!;
    return this.pages[page]!.toString('utf8', start - page * StringTable.PAGE, end - page * StringTable.PAGE);
  }
}

async function sharedStrings(zip: ZipFile, entry: ZipEntry, fail: (reason: string) => XlsxError, options: XlsxOptions, limits: Limits): Promise<StringTable> {
  const table = new StringTable(fail, limits);
  let text = '';
  let inItem = false;
  let inText = false;
  /** phonetic readings (`rPh`) of East Asian text are not part of what the cell shows */
  let phonetic = 0;
  await parsePart(zip, entry, fail, options, {
    get wantText() {
      return inText && phonetic === 0;
    },
    open(tag, attrs, selfClosing) {
      if (tag === 'sst') {
        // A table that says up front it is past the limit is refused at once, not after
        // tens of millions of items are parsed; one that says less is still counted as read.
        const declared = Number(attr(attrs, 'uniqueCount') ?? 0);
        if (declared > limits.sharedStrings) {
          throw fail(`more than ${limits.sharedStrings.toLocaleString('en-US')} shared strings (the limit)`);
        }
      } else if (tag === 'si') {
        text = '';
        inItem = !selfClosing;
        if (selfClosing) table.add('');
      } else if (tag === 'rPh') phonetic += selfClosing ? 0 : 1;
      else if (tag === 't' && inItem) inText = !selfClosing;
    },
    close(tag) {
      if (tag === 't') inText = false;
      else if (tag === 'rPh') phonetic = Math.max(0, phonetic - 1);
      else if (tag === 'si' && inItem) {
        inItem = false;
        table.add(unescapeOoxml(text));
      }
    },
    text(t) {
      text += t;
      if (text.length > limits.cell) throw fail(`a shared string longer than ${mb(limits.cell)} (the limit)`);
    },
  });
  return table;
}

/** The number format of each cell style (`s="3"` on a cell is the fourth `xf` of `cellXfs`). */
async function cellFormats(zip: ZipFile, entry: ZipEntry, fail: (reason: string) => XlsxError, options: XlsxOptions, limits: Limits): Promise<NumberFormat[]> {
  const custom = new Map<number, string>();
  const ids: number[] = [];
  let inCellXfs = false;
  await parsePart(zip, entry, fail, options, {
    wantText: false,
    open(tag, attrs, selfClosing) {
      if (tag === 'numFmt' && custom.size < limits.styles) {
        custom.set(Number(attr(attrs, 'numFmtId')), attr(attrs, 'formatCode') ?? 'General');
      } else if (tag === 'cellXfs') inCellXfs = !selfClosing;
      else if (tag === 'xf' && inCellXfs) {
        if (ids.length >= limits.styles) throw fail(`more than ${limits.styles} cell styles (the limit)`);
        ids.push(Number(attr(attrs, 'numFmtId') ?? 0));
      }
    },
    close(tag) {
      if (tag === 'cellXfs') inCellXfs = false;
    },
    text() {},
  });
  const compiled = new Map<number, NumberFormat>();
  return ids.map((id) => {
    let f = compiled.get(id);
    if (!f) {
      const code = custom.get(id);
      f = code !== undefined ? compileFormat(code) : builtinFormat(id);
      compiled.set(id, f);
    }
    return f;
  });
}

const mb = (bytes: number): string => (bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MB` : `${bytes} bytes`);

/** `B12` → 1 (0-based column), or -1 when the reference holds no letters. */
function columnOf(ref: string): number {
  let col = 0;
  let k = 0;
  for (; k < ref.length; k++) {
    const c = ref.charCodeAt(k) | 0x20;
    if (c < 0x61 || c > 0x7a) break;
    col = col * 26 + (c - 0x60);
    if (col > XLSX_LIMITS.columns) return col - 1;
  }
  return k === 0 ? -1 : col - 1;
}

/** Rows handed on at a time: enough to make each hand-over cheap. */
const ROWS_PER_CHUNK = 512;

/** A blank row: shared, never changed (rows are padded into new arrays). */
const BLANK: string[] = Object.freeze([]) as unknown as string[];

/**
 * A sheet's rows, as stored (a sheet stores no trailing empty cells, so rows
 * are as long as their last cell). Rows missing between two rows with text, or
 * present without text (a styled empty `<row r="3" s="1"/>`), are handed on as
 * blank rows in their place; those above the first row with text are not part
 * of the table and those below the last are left out.
 */
async function* sheetRows(
  zip: ZipFile,
  entry: ZipEntry,
  book: Workbook,
  fail: (reason: string) => XlsxError,
  name: string,
  options: XlsxOptions,
  limits: Limits,
): AsyncGenerator<string[][]> {
  let ready: string[][] = [];
  /** the number of the last row handed on; 0 before the first */
  let lastRow = 0;
  let rowNumber = 0;
  let cells: string[] = [];
  let rowLength = 0;
  let col = -1;
  let type = '';
  let style = 0;
  let value = '';
  let inline = '';
  /** which text is being collected: a cell's value `v`, or an inline string's `t` */
  let into: 'v' | 't' | '' = '';
  let inInline = false;
  let phonetic = 0;

  const endCell = (): void => {
    let text: string;
    if (type === 's') {
      const s = book.strings.get(Number(value));
      if (s === undefined && value.trim() !== '') throw fail(`a cell refers to shared string ${value}, of ${book.strings.count}`);
      text = formatText(s ?? '', book.formats[style]);
    } else if (type === 'inlineStr') text = formatText(unescapeOoxml(inline), book.formats[style]);
    else if (type === 'str') text = formatText(unescapeOoxml(value), book.formats[style]);
    else if (type === 'e') text = unescapeOoxml(value);
    else if (type === 'd') text = formatIsoDate(unescapeOoxml(value), book.formats[style]);
    else if (type === 'b') text = value === '1' || value === 'true' ? 'TRUE' : value === '' ? '' : 'FALSE';
    else if (value.trim() === '') text = '';
    else {
      const n = Number(value);
      text = Number.isNaN(n) ? value : formatNumber(n, book.formats[style] ?? { kind: 'general' }, book.date1904);
    }
    if (text === '') return;
    rowLength += text.length;
    if (rowLength > limits.cell) throw tooLong(name, 'row', rowNumber);
    while (cells.length < col) cells.push('');
    cells[col] = text;
  };

  const handler: XmlHandler = {
    get wantText() {
      return into !== '' && phonetic === 0;
    },
    open(tag, attrs, selfClosing) {
      switch (tag) {
        case 'dimension': {
          const last = (attr(attrs, 'ref') ?? '').split(':').at(-1) ?? '';
          const width = columnOf(last) + 1;
          if (options.shape && width > 0) options.shape.width = Math.min(width, limits.columns);
          return;
        }
        case 'row': {
          const r = Number(attr(attrs, 'r'));
          rowNumber = Number.isInteger(r) && r > 0 ? r : rowNumber + 1;
          cells = [];
          rowLength = 0;
          col = -1;
          if (selfClosing) handler.close('row');
          return;
        }
        case 'c': {
          const ref = attr(attrs, 'r');
          const at = ref === undefined ? -1 : columnOf(ref);
          col = at >= 0 ? at : col + 1;
          if (col >= limits.columns) throw fail(`row ${rowNumber} is wider than ${limits.columns} columns (the limit)`);
          type = attr(attrs, 't') ?? 'n';
          style = Number(attr(attrs, 's') ?? 0);
          value = '';
          inline = '';
          if (selfClosing) endCell();
          return;
        }
        case 'v':
          if (!selfClosing) into = 'v';
          return;
        case 'is':
          inInline = !selfClosing;
          return;
        case 'rPh':
          if (!selfClosing) phonetic++;
          return;
        case 't':
          if (inInline && !selfClosing) into = 't';
          return;
      }
    },
    close(tag) {
      switch (tag) {
        case 'v':
        case 't':
          into = '';
          return;
        case 'is':
          inInline = false;
          return;
        case 'rPh':
          phonetic = Math.max(0, phonetic - 1);
          return;
        case 'c':
          endCell();
          return;
        case 'row': {
          if (cells.length === 0) return;
          if (lastRow === 0) {
            if (options.shape) options.shape.firstRow = rowNumber;
          } else for (let gap = lastRow + 1; gap < rowNumber; gap++) ready.push(BLANK);
          lastRow = Math.max(lastRow, rowNumber);
          ready.push(cells);
          cells = [];
          return;
        }
      }
    },
    text(t) {
      if (into === 'v') value += t;
      else inline += t;
      if (value.length + inline.length > limits.cell) throw tooLong(name, 'row', rowNumber);
    },
  };
  const progress = options.progress;
  if (progress) {
    progress.read = 0;
    progress.total = entry.compressedSize;
  }
  const onRead = progress ? (bytes: number): void => void (progress.read += bytes) : undefined;
  for await (const _ of parseChunks(zip, entry, fail, options, handler, onRead)) {
    void _;
    if (ready.length >= ROWS_PER_CHUNK) {
      yield ready;
      ready = [];
    }
  }
  if (ready.length) yield ready;
}
