/**
 * The model a new deployment starts with, so its first build has something to serve and its
 * owner something to copy. Its SQL is inline rows written in SQL every data source reads (no
 * casts, no dates), so the build succeeds whatever the deployment connects to; its names all
 * start with `starter_`, so they never collide with the model the owner writes next.
 */
export const STARTER_MODEL_PATH = 'model/cubes/starter.yml';

export const STARTER_MODEL = `# A starter model: one cube over three inline rows, and a view over it.
# Replace it with cubes over your own tables; see the data model reference.
cubes:
  - name: starter_orders
    title: Starter orders
    description: Three sample orders, defined inline so that no table is needed.
    sql: >
      SELECT 1 AS id, 'completed' AS status, 10 AS amount
      UNION ALL SELECT 2, 'processing', 20
      UNION ALL SELECT 3, 'completed', 30

    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true

      - name: status
        sql: status
        type: string

      - name: amount
        sql: amount
        type: number

    measures:
      - name: count
        type: count

      - name: total_amount
        title: Total amount
        sql: amount
        type: sum

    segments:
      - name: completed
        sql: "{CUBE}.status = 'completed'"

views:
  - name: starter_orders_view
    description: What the starter model offers to queries.
    cubes:
      - join_path: starter_orders
        includes:
          - status
          - amount
          - count
          - total_amount
          - completed
`;
